// k0s's command line for one component, read live: k0s computes its components' flags at runtime,
// so a k0s controller (the real k0s, with its default components, as compare's k0s plane runs it)
// starts on a 1-host lab of its own, and the component's argv is read from /proc/<pid>/cmdline once
// k0s's children have settled. The lab is removed afterwards, whatever happened. The controller's
// config has the cluster's CIDRs and name (compare's k0sConfig); its own address and host name are
// mapped to the prove host's (translate.ts).
import type { Host, Inventory } from '../../../core/inventory/load.ts';
import { ensureAll, ensureBinary } from '../../../core/components/binaries/index.ts';
import type { Session } from '../../../core/transport/index.ts';
import { StepError } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/log.ts';
import { clusterParams } from '../../compare/index.ts';
import { emptyPlane } from '../../planes/types.ts';
import { K0S_PARTS } from '../../planes/k0s/index.ts';
import { k0sConfig } from '../../planes/k0s/config.ts';
import {
  processName,
  settledTree,
  stageBinaries,
  startController,
} from '../../planes/k0s/controller.ts';
import type { ToolArgv } from './kubeadm.ts';

/** The lab k0s runs on, under the prove's state dir (a test's lab helper removes what a crashed run left there). */
export const K0S_FLAGS_LAB = 'k0s-flags';

export async function k0sArgv(
  inv: Inventory,
  host: Host,
  component: string,
  stateDir: string,
  log: Logger,
): Promise<ToolArgv> {
  const version = inv.cluster.kubernetesVersion;
  const k0s = await ensureBinary('k0s', { kubernetesVersion: version, log });
  const parts = await ensureAll(K0S_PARTS, { kubernetesVersion: version, log });
  const lab = await import('../../lab/index.ts');
  const labOpts = { name: K0S_FLAGS_LAB, stateDir, log };
  log.info(
    `  k0s's flags for ${component}: k0s ${k0s.version} as a controller on lab "${K0S_FLAGS_LAB}" (1 host), read from /proc once its children settle`,
  );
  await lab.labDown(labOpts);
  let s: Session | undefined;
  try {
    const info = await lab.labUp({ ...labOpts, hosts: 1 });
    s = await lab.labConnect(info.hosts[0]!.name, labOpts);
    const plane = emptyPlane('k0s', '', true);
    await stageBinaries(s, k0s, parts, k0sConfig(clusterParams(inv, host), s.host.address));
    await startController(plane, s, false);
    const { descendants } = await settledTree(s, plane);
    const proc = descendants.find((d) => processName(d.argv) === component);
    if (!proc)
      throw new StepError(
        'flags prove',
        `k0s runs no ${component} process (children: ${descendants.map((d) => processName(d.argv)).join(', ')})`,
        { host: s.host.name },
      );
    const name = (await s.exec(['hostname'])).stdout.trim();
    return {
      argv: proc.argv,
      tool: 'k0s',
      version: k0s.version,
      sha256: k0s.sha256,
      command: [
        'k0s',
        'install',
        'controller',
        '--config',
        'k0s.yaml',
        '&&',
        'systemctl',
        'start',
        'k0scontroller',
      ],
      source: `/proc/${proc.pid}/cmdline on the k0s controller (lab ${K0S_FLAGS_LAB}, ${s.host.address})`,
      hosts: [
        { from: s.host.address, to: host.address, what: "the k0s controller's address" },
        { from: name, to: host.name, what: "the k0s controller's host name", whole: true },
      ],
    };
  } finally {
    await s?.close();
    await lab.labDown(labOpts);
  }
}
