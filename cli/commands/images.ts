import { mkdtempSync, rmSync, statSync, existsSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Option } from 'commander';
import { act, topCommand, type Cli, type Run } from '../command.ts';
import { hostOptions, options, type HostOpts, type InventoryOpts } from '../common.ts';
import { hostContext } from '../lab-inventory.ts';
import { adminCreds } from '../../core/apply/creds.ts';
import { connect, readOnly, type Session } from '../../core/transport/index.ts';
import { registryCatalog } from '../../core/gates/registry.ts';
import { REGISTRY_PORT } from '../../core/components/models/registry.ts';
import { ensureAll } from '../../core/components/binaries/index.ts';
import type { WireContext } from '../../core/apply/context.ts';
import { InputError, StepError } from '../../lib/errors.ts';
import { printJson } from '../../lib/log.ts';
import { run } from '../../lib/proc.ts';

const HELP = `
usage: hardwire images [--inventory FILE] [--state-dir DIR] [--accept-new-host-keys] [--quiet] [--json]
       hardwire images add SOURCE --as NAME:TAG [--as NAME:TAG ...] [--inventory FILE] [--state-dir DIR] [--json]

Lists what the lab registry serves: each repository of its /v2/_catalog with its tags
(/v2/<name>/tags/list), read on the registry's host (the first control-plane host of a cluster
with workers) at https://<address>:${REGISTRY_PORT}, its certificate verified with the cluster CA.
containerd on every worker uses it as docker.io's mirror, so "nginx" in a Pod is
docker.io/library/nginx:latest, answered from here.

  add SOURCE   push one image into it: SOURCE is a docker-archive tarball (docker save, or
               imagebuild's) or an OCI image layout directory holding one image. Each --as names
               it as docker.io does: "foo:1" is library/foo:1, which a Pod asks for as "foo:1".
               Pushed from this machine through the SSH connection (imagebuild -push, verified with
               the cluster CA); a blob the registry holds is not sent again. What wire pushes
               (busybox, nginx) is pushed again at the registry's next restart; an added image stays.
`;

interface Opts extends InventoryOpts, HostOpts {
  json?: boolean;
}

interface AddOpts extends Opts {
  as: string[];
}

const NAME = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*:[\w][\w.-]{0,127}$/;

/** docker.io's rule: a name without a "/" is under library/. */
function dockerName(a: string): string {
  if (!NAME.test(a))
    throw new InputError(
      '--as',
      `"${a}" is not NAME:TAG (lowercase name, a tag such as 1.0 or latest), e.g. --as foo:1.0`,
    );
  return a.split(':')[0]!.includes('/') ? a : `library/${a}`;
}

function checkSource(src: string): string {
  const path = resolve(src);
  if (!existsSync(path))
    throw new InputError(
      'SOURCE',
      `${src} does not exist; give a docker-archive tarball or an OCI layout directory`,
    );
  if (statSync(path).isDirectory() && !existsSync(join(path, 'oci-layout')))
    throw new InputError(
      'SOURCE',
      `${src} is a directory without an oci-layout file: not an OCI image layout`,
    );
  return path;
}

/** The registry's host, connected; throws when the cluster runs none. */
async function registryHost(
  ctx: WireContext,
): Promise<{ name: string; address: string; s: Session }> {
  const h = ctx.inv.hosts.find((x) => x.isRegistry);
  if (!h)
    throw new StepError(
      'images',
      'this cluster runs no registry: it has no worker (give a host the worker role)',
    );
  const s = await connect(h, {
    ...(ctx.inv.knownHostsFile ? { knownHostsFile: ctx.inv.knownHostsFile } : {}),
    acceptNewHostKeys: ctx.opts.acceptNewHostKeys,
    timeoutMs: 10_000,
  });
  return { name: h.name, address: h.address, s };
}

/**
 * A local port that reaches the registry host's 127.0.0.1:5000 through the SSH connection, as
 * `ssh -L` would: the registry's certificate names 127.0.0.1, so the push verifies it as it is.
 */
async function forward(s: Session): Promise<{ port: number; close: () => void }> {
  const server = createServer((sock) => {
    s.openLocalPort(REGISTRY_PORT).then(
      (ch) => {
        sock.pipe(ch).pipe(sock);
        sock.on('error', () => ch.end());
        ch.on('error', () => sock.destroy());
      },
      () => sock.destroy(),
    );
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

export function declare(root: Cli): Cli {
  const images = topCommand(
    root,
    'images',
    "list the images the lab registry serves (docker.io's mirror on the workers); add one",
    HELP,
  )
    .addOption(options.inventory())
    .addOption(options.stateDir());
  hostOptions(images, { gates: false })
    .addOption(options.json())
    .action(
      act(async ({ opts, log }: Run<Opts>) => {
        const ctx = await hostContext(opts, log, true);
        const { name, address, s } = await registryHost(ctx);
        try {
          const repos = await registryCatalog(readOnly(s), address, adminCreds(ctx.clusterDir).ca);
          const registry = `https://${address}:${REGISTRY_PORT}`;
          if (opts.json) printJson({ registry, host: name, repositories: repos });
          else {
            process.stdout.write(`registry ${registry} on ${name} (docker.io's mirror)\n`);
            for (const r of repos) process.stdout.write(`${r.image}\t${r.tags.join(', ')}\n`);
          }
          return 0;
        } finally {
          await s.close();
        }
      }),
    );
  const add = images
    .command('add')
    .argument('<source>')
    .addOption(options.inventory())
    .addOption(options.stateDir());
  hostOptions(add, { gates: false })
    .addOption(options.json())
    .addOption(
      new Option('--as <name:tag>', 'a name to push it as (repeatable)').argParser(
        (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
      ),
    )
    .action(
      act(async ({ opts, log }: Run<AddOpts>, source: string) => {
        if (!opts.as || opts.as.length === 0)
          throw new InputError('--as', 'name the image at least once, e.g. --as foo:1.0');
        const names = opts.as.map(dockerName);
        const path = checkSource(source);
        const ctx = await hostContext(opts, log, false);
        const [ib] = await ensureAll(['imagebuild'], { log });
        const { name, address, s } = await registryHost(ctx);
        const tmp = mkdtempSync(join(tmpdir(), 'hardwire-images-'));
        const fwd = await forward(s);
        try {
          const ca = join(tmp, 'ca.crt');
          writeFileSync(ca, adminCreds(ctx.clusterDir).ca);
          const r = await run(
            ib!.path,
            [
              '-push',
              path,
              '-registry',
              `127.0.0.1:${fwd.port}`,
              '-ca',
              ca,
              '-wait',
              '10s',
              ...names.flatMap((n) => ['-as', n]),
            ],
            { step: `push ${source}`, timeoutMs: 600_000 },
          );
          const pushed = r.stdout
            .trim()
            .split('\n')
            .map((l) => l.replace(/^pushed 127\.0\.0\.1:\d+\//, ''));
          if (opts.json)
            printJson({ host: name, registry: `https://${address}:${REGISTRY_PORT}`, pushed });
          else for (const p of pushed) process.stdout.write(`pushed docker.io/${p}\n`);
          return 0;
        } finally {
          fwd.close();
          rmSync(tmp, { recursive: true, force: true });
          await s.close();
        }
      }),
    );
  return images;
}
