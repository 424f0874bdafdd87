// hardwire components build|fetch|list: the pinned etcd, Kubernetes and k0s binaries, verified.
import { dirname } from 'node:path';
import type { Command } from '../command.ts';
import { parse } from '../args.ts';
import { InputError } from '../../lib/errors.ts';
import { printJson } from '../../lib/log.ts';
import { loadInventory } from '../../inventory/load.ts';
import { parseNames } from '../../components/binaries/catalog.ts';
import { resolveFromDir } from '../../components/binaries/local.ts';
import { ensureAll, listBinaries, type EnsureOptions } from '../../components/binaries/index.ts';

const help = `
usage: hardwire components build|fetch|list [names...] [options]

Gives hardwire its component binaries (kube-apiserver, kube-controller-manager, kube-scheduler,
kubeadm, kubectl, etcd, etcdctl, k0s) at pinned versions, verified by sha256, in
$HARDWIRE_CACHE/bin/<name>/<version>/ (default ~/.cache/hardwire).

  build [names...]   build from the Go modules in components/go/ (offline path); a binary
                     already built by the same recipe is reused, so a warm second run does nothing
  fetch [names...]   download the official release binaries and check their sha256
  list               the cached binaries: name, version, path, sha256, source

Names default to all; "kubernetes" means the five Kubernetes binaries.

options:
  --from DIR                 use binaries from DIR instead (checked and copied into the cache)
  --inventory FILE           take cluster.kubernetesVersion and components.from from an inventory
  --kubernetes-version VER   Kubernetes release (default v1.36.3); etcd and k0s versions follow it
  --force                    rebuild or re-download even if the cache holds a verified binary
  --json                     print one JSON document on stdout
  --quiet                    no progress lines

environment:
  HARDWIRE_CACHE                    cache root (default ~/.cache/hardwire)
  HARDWIRE_KUBERNETES_RELEASE_URL   default https://dl.k8s.io/release
  HARDWIRE_ETCD_RELEASE_URL         default https://github.com/etcd-io/etcd/releases/download
  HARDWIRE_K0S_RELEASE_URL          default https://github.com/k0sproject/k0s/releases/download
Go builds use GOMODCACHE=~/.cache/hardwire/gomod and GOCACHE=~/.cache/go-build.
`;

export const command: Command = {
  name: 'components',
  summary: 'build, fetch or list the pinned etcd, Kubernetes and k0s binaries',
  help,
  async run({ argv, log }) {
    const { values, positionals } = parse(argv, {
      json: { type: 'boolean' },
      quiet: { type: 'boolean' },
      force: { type: 'boolean' },
      from: { type: 'string' },
      inventory: { type: 'string' },
      'kubernetes-version': { type: 'string' },
    });
    const [action, ...rest] = positionals;
    if (action !== 'build' && action !== 'fetch' && action !== 'list') {
      throw new InputError('action', `${action === undefined ? 'missing' : `unknown action "${action}"`}; use build, fetch or list (see --help)`);
    }

    if (action === 'list') {
      if (rest.length > 0) throw new InputError('list', 'takes no names');
      const list = await listBinaries();
      if (values.json) printJson({ binaries: list });
      else if (list.length === 0) process.stdout.write('no cached binaries; run "hardwire components build" or "fetch"\n');
      else for (const b of list) process.stdout.write(`${b.name.padEnd(24)} ${b.version.padEnd(14)} ${b.source.padEnd(6)} ${b.sha256}  ${b.path}\n`);
      return list.some((b) => b.source === 'corrupt') ? 1 : 0;
    }

    const opts: EnsureOptions = { log, source: action, force: values.force === true };
    if (values.inventory !== undefined) {
      const inv = loadInventory(values.inventory);
      opts.kubernetesVersion = inv.cluster.kubernetesVersion;
      if (inv.doc.components?.from) opts.from = resolveFromDir(inv.doc.components.from, 'components.from', dirname(inv.file));
    }
    if (values['kubernetes-version'] !== undefined) opts.kubernetesVersion = values['kubernetes-version'];
    if (values.from !== undefined) opts.from = values.from;

    const names = parseNames(rest);
    const started = Date.now();
    const got = await ensureAll(names, opts);
    const seconds = Math.round((Date.now() - started) / 100) / 10;
    if (values.json) {
      printJson({ action, seconds, binaries: got });
    } else {
      for (const b of got) {
        process.stdout.write(`${b.name.padEnd(24)} ${b.version.padEnd(14)} ${b.source.padEnd(6)} ${b.acquired ? 'new   ' : 'cached'} ${b.sha256}  ${b.path}\n`);
      }
      log.info(`${got.filter((b) => b.acquired).length} of ${got.length} binaries ${action === 'build' ? 'built' : 'acquired'} in ${seconds}s`);
    }
    return 0;
  },
};
