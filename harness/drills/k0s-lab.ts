// A fresh 1-host lab running one k0s controller with its default components, for the k0s drills.
// Built from compare's k0s plane (stageBinaries, startController, settledTree, K0S_PARTS,
// k0sConfig), so the drill kills the same k0s that `hardwire compare` reads; ready once /readyz is
// ok and both controllers' Leases are held and renewing.
import { ensureAll, ensureBinary } from '../../core/components/binaries/index.ts';
import { clusterParams } from '../compare/index.ts';
import { K0S_PARTS } from '../planes/k0s/index.ts';
import { K0S_DATA, k0sConfig } from '../planes/k0s/config.ts';
import { settledTree, stageBinaries, startController, step } from '../planes/k0s/controller.ts';
import { emptyPlane, type PlaneData } from '../planes/types.ts';
import { loadValidInventory } from '../../core/validate/inventory.ts';
import {
  credsFromKubeconfigText,
  withServer,
  type KubeCreds,
} from '../../core/transport/kube-api.ts';
import { RENEW_INTERVAL_MS, readLease } from '../../core/gates/leases.ts';
import { StepError } from '../../lib/errors.ts';
import { retry } from '../../lib/retry.ts';
import { APISERVER_PORT } from '../../lib/constants.ts';
import type { Logger } from '../../lib/log.ts';
import type { Session } from '../../core/transport/index.ts';

export const K0S_UNIT = 'k0scontroller';
/** k0s writes its admin kubeconfig here (server https://localhost:6443). */
export const K0S_ADMIN_CONF = `${K0S_DATA}/pki/admin.conf`;
export const K0S_LEASES = ['kube-controller-manager', 'kube-scheduler'] as const;
/**
 * A leader renews every 2 s (RENEW_INTERVAL_MS); the Date header the age is measured against has
 * whole seconds. Older than this, nobody is renewing: the component is not leading, even though the
 * Lease stays valid for candidates for its 15 s duration.
 */
export const RENEWING_MS = RENEW_INTERVAL_MS + 4000;

export interface K0sLab {
  lab: string;
  stateDir: string;
  host: { name: string; address: string };
  session: Session;
  version: string;
  /** k0s's admin credentials, pointed at the host address (the serving cert has it as a SAN). */
  creds: KubeCreds;
  /** What was run to get here, with timings (compare's step records). */
  plane: PlaneData;
}

/** Both Leases held and being renewed, or throws with what it last saw. */
async function leasesHeld(creds: KubeCreds, timeoutMs: number): Promise<void> {
  let seen: { l: string; ok: boolean; d: string }[] = [];
  await retry(
    async () => {
      seen = await Promise.all(
        K0S_LEASES.map((l) =>
          readLease(creds, l).then(
            (x) => ({
              l,
              ok: x.holder !== '' && x.ageMs <= RENEWING_MS,
              d: `${x.holder || 'nobody'}, ${Math.round(x.ageMs / 1000)} s ago`,
            }),
            (e: unknown) => ({ l, ok: false, d: String(e) }),
          ),
        ),
      );
      if (!seen.every((x) => x.ok)) throw new Error('not held');
    },
    {
      timeoutMs,
      intervalMs: 1000,
      onTimeout: () => {
        throw new StepError(
          'k0s lab',
          `the controllers' Leases were not held within ${timeoutMs / 1000} s`,
          { detail: seen.map((x) => `${x.l}: ${x.d}`) },
        );
      },
    },
  );
}

/** Recreates lab `name` with one host and starts one k0s controller on it. The caller closes and tears down. */
export async function k0sLabUp(name: string, stateDir: string, log: Logger): Promise<K0sLab> {
  const lab = await import('../lab/index.ts');
  const labOpts = { name, stateDir, log };
  const plane = emptyPlane('k0s', '', true);
  await lab.labDown(labOpts);
  let t0 = performance.now();
  const info = await lab.labUp({ ...labOpts, hosts: 1 });
  plane.steps.push({
    step: `fresh lab "${name}" up (1 host)`,
    ms: Math.round(performance.now() - t0),
    ok: true,
    output: info.hosts.map((h) => `${h.name} ${h.address}`).join(', '),
  });
  // The lab's own inventory gives the cluster parameters, as compare takes them from hardwire's.
  const inv = loadValidInventory(info.inventory);
  const host = inv.hosts[0]!;
  const params = clusterParams(inv, host);
  const k0s = await ensureBinary('k0s', { kubernetesVersion: params.kubernetesVersion, log });
  const parts = await ensureAll(K0S_PARTS, { kubernetesVersion: params.kubernetesVersion, log });
  const session = await lab.labConnect(host.name, labOpts);
  try {
    t0 = performance.now();
    await stageBinaries(session, k0s, parts, k0sConfig(params, host.address));
    plane.steps.push({
      step: `stage k0s ${k0s.version} and ${parts.map((p) => `${p.name} ${p.version}`).join(', ')}`,
      ms: Math.round(performance.now() - t0),
      ok: true,
    });
    const version = (
      await step(plane, session, ['/usr/local/bin/k0s', 'version'], 'k0s version')
    ).trim();
    log.info(`  k0s ${version}: one controller on ${host.name} (${host.address}), lab "${name}"`);
    await startController(plane, session, false);
    const creds = withServer(
      credsFromKubeconfigText(
        (await session.readFile(K0S_ADMIN_CONF)).toString('utf8'),
        K0S_ADMIN_CONF,
      ),
      `https://${host.address}:${APISERVER_PORT}`,
    );
    t0 = performance.now();
    await leasesHeld(creds, 180_000);
    plane.steps.push({
      step: `${host.name}: Leases ${K0S_LEASES.join(', ')} held`,
      ms: Math.round(performance.now() - t0),
      ok: true,
    });
    // Every supervised child there and stable, so the baseline sees the whole tree.
    await settledTree(session, plane);
    return {
      lab: name,
      stateDir,
      host: { name: host.name, address: host.address },
      session,
      version,
      creds,
      plane,
    };
  } catch (err) {
    await session.close();
    throw err;
  }
}

export async function k0sLabDown(name: string, stateDir: string, log: Logger): Promise<void> {
  const lab = await import('../lab/index.ts');
  await lab.labDown({ name, stateDir, log });
}
