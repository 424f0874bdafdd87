// Every node of the kubeadm plane (issue 23): kube-bench's node section (4.x) on each, and each
// one's process tree from /proc. init's host is a node too (its kubelet runs the static Pods); a
// joined worker or control-plane member, when the plane has one, is another.
import type { Session } from '../../core/transport/index.ts';
import type { CollectContext, PlaneData } from './types.ts';
import { scanLabNodes } from '../cis/index.ts';
import { readPlaneProcs } from './proc-read.ts';

function roleOf(plane: PlaneData, name: string, first: boolean): string {
  if (first) return 'kubeadm init: control plane and node';
  if (plane.kubeadm?.worker?.node === name) return 'kubeadm join: worker';
  if (plane.kubeadm?.controlPlane?.node === name)
    return 'kubeadm join --control-plane: control plane and node';
  return 'node';
}

export async function readKubeadmNodes(
  plane: PlaneData,
  first: Session,
  others: string[],
  labOpts: { name: string; stateDir: string; log: CollectContext['log'] },
  ctx: CollectContext,
): Promise<void> {
  const lab = await import('../lab/index.ts');
  const sessions: Session[] = [];
  try {
    for (const name of others) sessions.push(await lab.labConnect(name, labOpts));
    const nodes = [first, ...sessions];
    if (ctx.cis)
      plane.nodeCis = await scanLabNodes(
        'kubeadm',
        nodes,
        ctx.params.kubernetesVersion,
        ctx.log,
        plane.steps,
      );
    plane.nodeProcs = await readPlaneProcs(
      nodes.map((s, i) => ({
        s,
        host: `${labOpts.name}/${s.host.name}`,
        role: roleOf(plane, s.host.name, i === 0),
      })),
      plane,
    );
  } finally {
    for (const s of sessions) await s.close();
  }
}
