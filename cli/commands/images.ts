import { act, topCommand, type Cli, type Run } from '../command.ts';
import { hostOptions, options, type HostOpts, type InventoryOpts } from '../common.ts';
import { hostContext } from '../lab-inventory.ts';
import { adminCreds } from '../../core/apply/creds.ts';
import { connect, readOnly } from '../../core/transport/index.ts';
import { registryCatalog } from '../../core/gates/registry.ts';
import { REGISTRY_PORT } from '../../core/components/models/registry.ts';
import { StepError } from '../../lib/errors.ts';
import { printJson } from '../../lib/log.ts';

const HELP = `
usage: hardwire images [--inventory FILE] [--state-dir DIR] [--accept-new-host-keys] [--quiet] [--json]

Lists what the lab registry serves: each repository of its /v2/_catalog with its tags
(/v2/<name>/tags/list), read on the registry's host (the first control-plane host of a cluster
with workers) at https://<address>:${REGISTRY_PORT}, its certificate verified with the cluster CA.
containerd on every worker uses it as docker.io's mirror, so "nginx" in a Pod is
docker.io/library/nginx:latest, answered from here.
`;

interface Opts extends InventoryOpts, HostOpts {
  json?: boolean;
}

export function declare(root: Cli): Cli {
  const images = topCommand(
    root,
    'images',
    "list the images the lab registry serves (docker.io's mirror on the workers)",
    HELP,
  )
    .addOption(options.inventory())
    .addOption(options.stateDir());
  return hostOptions(images, { gates: false })
    .addOption(options.json())
    .action(
      act(async ({ opts, log }: Run<Opts>) => {
        const ctx = await hostContext(opts, log, true);
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
        try {
          const repos = await registryCatalog(
            readOnly(s),
            h.address,
            adminCreds(ctx.clusterDir).ca,
          );
          const registry = `https://${h.address}:${REGISTRY_PORT}`;
          if (opts.json) printJson({ registry, host: h.name, repositories: repos });
          else {
            process.stdout.write(`registry ${registry} on ${h.name} (docker.io's mirror)\n`);
            for (const r of repos) process.stdout.write(`${r.image}\t${r.tags.join(', ')}\n`);
          }
          return 0;
        } finally {
          await s.close();
        }
      }),
    );
}
