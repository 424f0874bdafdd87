// compare's own lab for the hardwire plane, when no --inventory is given: two hosts, node1 etcd and
// control plane (no kubelet: hardwire runs its control plane as systemd units, and the kubelet and
// kube-proxy only on workers), node2 its worker, as kubeadm's and k0s's workers are hosts of their
// own. Made fresh on each run, as theirs are, so its time to first Pod starts at a bare lab.
import type { Logger } from '../../lib/log.ts';

export const HARDWIRE_LAB = 'compare-hardwire';
/** node1 etcd + control plane, node2 worker only (lab/plan.ts validateDedicatedWorkers). */
export const HARDWIRE_LAB_SHAPE = { hosts: 2, workers: true, dedicatedWorkers: 1 } as const;

/** The lab removed and brought up again (bare: nothing installed); its inventory file. With `live` false it must already be up. */
export async function hardwireLab(
  name: string,
  stateDir: string | undefined,
  log: Logger,
  live: boolean,
): Promise<string> {
  const lab = await import('../lab/index.ts');
  const o = { name, ...(stateDir ? { stateDir } : {}), log };
  if (!live) return (await lab.labStatus(o)).inventory;
  await lab.labDown(o);
  return (await lab.labUp({ ...o, ...HARDWIRE_LAB_SHAPE })).inventory;
}

export async function hardwireLabDown(
  name: string,
  stateDir: string | undefined,
  log: Logger,
): Promise<void> {
  const lab = await import('../lab/index.ts');
  await lab.labDown({ name, ...(stateDir ? { stateDir } : {}), log });
}
