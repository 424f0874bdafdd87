// hardwire components build|fetch|list: the pinned etcd, Kubernetes, k0s and kube-bench binaries, verified.
import { dirname } from 'node:path';
import { Option } from 'commander';
import { ARCHES, type Arch } from '../../lib/arch.ts';
import { act, group, topCommand, type Cli, type Run } from '../command.ts';
import { options } from '../common.ts';
import { printJson } from '../../lib/log.ts';
import { loadValidInventory } from '../../core/validate/inventory.ts';
import { groupOf, parseNames } from '../../core/components/binaries/catalog.ts';
import { sourceRecipe } from '../../core/components/binaries/sources.ts';
import { InputError } from '../../lib/errors.ts';
import { resolveFromDir } from '../../core/components/binaries/local.ts';
import {
  ensureAll,
  listBinaries,
  type EnsureOptions,
} from '../../core/components/binaries/index.ts';

const HELP = `
usage: hardwire components build|fetch [names...] [options]
       hardwire components list [--json]

Gives hardwire its component binaries (kube-apiserver, kube-controller-manager, kube-scheduler,
kubeadm, kubectl, etcd, etcdctl, etcdutl, k0s, k0s-etcd, konnectivity-server, kube-bench) at pinned versions, verified by sha256,
in $HARDWIRE_CACHE/bin/<name>/<version>/ (default ~/.cache/hardwire).

  build [names...]   build from the Go modules in core/components/go/ (offline path); a binary
                     already built by the same recipe is reused, so a warm second run does nothing.
                     k0s and kube-bench are built from their pinned source archives instead (the
                     module proxy refuses them): --source, else $HARDWIRE_K0S_SOURCE or
                     $HARDWIRE_KUBE_BENCH_SOURCE, else ../shared/sources/<tool>-<tag>.tar.gz beside
                     the repo, else the release download. kube-bench's cfg/ is cached beside it.
                     k0s-etcd (3.6.14) and konnectivity-server (0.36.0) are what k0s pins; the
                     latter has no release binaries, so it is always built.
                     What a worker runs is always built, never downloaded: kubelet and kube-proxy
                     (core/components/go/kubernetes-node), containerd + containerd-shim-runc-v2 + ctr
                     2.3.3 and runc 1.4.3 (k0s's pins; runc with cgo and libseccomp-dev), the CNI
                     plugins bridge, host-local, loopback, portmap (v1.9.1), coredns (v1.14.2),
                     pause (3.10.2, cc -static from the Kubernetes module's build/pause/linux/pause.c)
                     imagebuild (hardwire's image writer on go-containerregistry) and webhook
                     (hardwire's stage-2 admission webhook, stdlib only, in its own image).
  fetch [names...]   download the official release binaries and check their sha256
  list               the cached binaries: name, version, path, sha256, source

Names default to all; "kubernetes" means the five Kubernetes binaries, "workers" all of a worker's.

options (build and fetch):
  --from DIR                 use binaries from DIR instead (checked and copied into the cache)
  --inventory FILE           take cluster.kubernetesVersion and components.from from an inventory
  --kubernetes-version VER   Kubernetes release (default v1.36.3); etcd and k0s versions follow it
  --version VER              the named binaries' own version, when no Kubernetes release pairs it:
                             etcd v3.6.16, the patch an upgrade to etcd 3.7 passes through
  --force                    rebuild or re-download even if the cache holds a verified binary
  --arch amd64|arm64         the architecture to build for (default this machine's); another one is
                             cross-built (a cross C compiler for pause and runc), cached apart under
                             bin/linux-<arch>/, and its version is probed under qemu-user
  --source FILE|DIR          (build) the source of the one k0s or kube-bench named: the pinned
                             archive (sha256 checked) or an unpacked tree
options (all):
  --json                     print one JSON document on stdout
  --quiet                    no progress lines

environment:
  HARDWIRE_CACHE                    cache root (default ~/.cache/hardwire)
  HARDWIRE_KUBERNETES_RELEASE_URL   default https://dl.k8s.io/release
  HARDWIRE_ETCD_RELEASE_URL         default https://github.com/etcd-io/etcd/releases/download
  HARDWIRE_K0S_RELEASE_URL          default https://github.com/k0sproject/k0s/releases/download
  HARDWIRE_KUBE_BENCH_RELEASE_URL   default https://github.com/aquasecurity/kube-bench/releases/download
  HARDWIRE_KUBE_BENCH_SOURCE        kube-bench's source archive or tree, as --source
  HARDWIRE_K0S_SOURCE               k0s's source archive or tree, as --source
Go builds use GOMODCACHE=~/.cache/hardwire/gomod and GOCACHE=~/.cache/go-build.
`;

interface Opts {
  json?: boolean;
  quiet?: boolean;
}
interface EnsureOpts extends Opts {
  force?: boolean;
  from?: string;
  inventory?: string;
  kubernetesVersion?: string;
  version?: string;
  source?: string;
  arch?: Arch;
}

export function declare(root: Cli): Cli {
  const components = topCommand(
    root,
    'components',
    'build, fetch or list the pinned etcd, Kubernetes and k0s binaries',
    HELP,
  )
    .addOption(options.json())
    .addOption(options.quiet());

  for (const source of ['build', 'fetch'] as const) {
    const cmd = components.command(source);
    if (source === 'build')
      cmd.option('--source <file|dir>', 'k0s or kube-bench source archive or unpacked tree');
    cmd
      .argument('[names...]')
      .option('--from <dir>', 'use binaries from DIR instead')
      // Not the inventory every other command acts on: only its versions and components.from are read (absent: the built-in versions).
      .option(
        '-i, --inventory <file>',
        'an inventory file whose cluster.kubernetesVersion and components.from to use',
      )
      .option(
        '--kubernetes-version <version>',
        'Kubernetes release; etcd and k0s versions follow it',
      )
      .option(
        '--version <version>',
        "the named binaries' own version (etcd v3.6.16, an upgrade's step)",
      )
      .option('--force', 'rebuild or re-download even if cached')
      .addOption(
        new Option(
          '--arch <arch>',
          "the architecture to build for (default this machine's)",
        ).choices(ARCHES),
      )
      .action(
        act(async ({ opts, log }: Run<EnsureOpts>, args: string[]) => {
          const ensure: EnsureOptions = { log, source, force: opts.force === true };
          if (opts.inventory !== undefined) {
            const inv = loadValidInventory(opts.inventory);
            ensure.kubernetesVersion = inv.cluster.kubernetesVersion;
            if (inv.doc.components?.from)
              ensure.from = resolveFromDir(
                inv.doc.components.from,
                'components.from',
                dirname(inv.file),
              );
          }
          if (opts.kubernetesVersion !== undefined)
            ensure.kubernetesVersion = opts.kubernetesVersion;
          if (opts.version !== undefined) ensure.version = opts.version;
          if (opts.arch !== undefined) ensure.arch = opts.arch;
          if (opts.from !== undefined) ensure.from = opts.from;
          if (opts.source !== undefined) ensure.sourcePath = opts.source;

          const names = parseNames(args);
          const sourced = [...new Set(names.filter((n) => sourceRecipe(groupOf(n))))];
          if (opts.source !== undefined && sourced.length === 0) {
            throw new InputError(
              '--source',
              `only applies to binaries built from a source archive (k0s, kube-bench); drop it, or name k0s or kube-bench`,
            );
          }
          if (opts.source !== undefined && sourced.length > 1) {
            throw new InputError(
              '--source',
              `is one tool's source, and ${sourced.join(' and ')} are named; build them one at a time`,
            );
          }
          const started = Date.now();
          const got = await ensureAll(names, ensure);
          const seconds = Math.round((Date.now() - started) / 100) / 10;
          if (opts.json) {
            printJson({ action: source, seconds, binaries: got });
          } else {
            for (const b of got) {
              process.stdout.write(
                `${b.name.padEnd(24)} ${b.version.padEnd(14)} ${b.source.padEnd(6)} ${b.acquired ? 'new   ' : 'cached'} ${b.sha256}  ${b.path}\n`,
              );
            }
            log.info(
              `${got.filter((b) => b.acquired).length} of ${got.length} binaries ${source === 'build' ? 'built' : 'acquired'} in ${seconds}s`,
            );
          }
          return 0;
        }),
      );
  }

  components.command('list').action(
    act(async ({ opts }: Run<Opts>) => {
      const list = await listBinaries();
      if (opts.json) printJson({ binaries: list });
      else if (list.length === 0)
        process.stdout.write('no cached binaries; run "hardwire components build" or "fetch"\n');
      else
        for (const b of list)
          process.stdout.write(
            `${b.name.padEnd(24)} ${b.version.padEnd(14)} ${b.source.padEnd(6)} ${b.sha256}  ${b.path}\n`,
          );
      return list.some((b) => b.source === 'corrupt') ? 1 : 0;
    }),
  );

  return group(components);
}
