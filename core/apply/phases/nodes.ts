// Each worker's Node is created by wire, with the pod CIDR the inventory gave it, before its kubelet
// starts. The kubelet then finds its Node already there and takes it over (K pkg/kubelet/kubelet_node_status.go:99,
// IsAlreadyExists), and kube-controller-manager's range allocator keeps a spec.podCIDRs it finds
// (K pkg/controller/nodeipam/ipam/range_allocator.go:321-322, occupyCIDRs) instead of handing out the
// next free range in registration order. So Node.spec.podCIDR always equals the range the node's CNI
// bridge really assigns and the other nodes route to it: one source, the inventory.
import type { Phase } from '../phase.ts';
import type { WireContext } from '../context.ts';
import { adminCreds } from '../creds.ts';
import { kubeJson } from '../../transport/kube-api.ts';
import { StepError } from '../../../lib/errors.ts';

interface NodeObj {
  spec?: { podCIDR?: string };
}

/** The phases that write through the API for workers: not in a dry run (the apiserver may not be up), not without workers. */
export const workersLive = (ctx: WireContext): boolean =>
  !ctx.opts.dryRun && ctx.inv.workerHosts.length > 0;

export const nodesPhase: Phase = {
  id: 'nodes',
  title:
    "Create each worker's Node with its inventory pod CIDR, before its kubelet registers (as admin)",
  shouldRun: workersLive,
  async run(ctx) {
    const creds = adminCreds(ctx.clusterDir);
    const live = await Promise.all(
      ctx.inv.workerHosts.map((h) =>
        kubeJson<NodeObj>(creds, 'GET', `/api/v1/nodes/${h.name}`, { allow: [404] }),
      ),
    );
    for (const [i, h] of ctx.inv.workerHosts.entries()) {
      const cidr = h.podCidr!.text;
      const got = live[i]!;
      if (got.status === 404) {
        const body = {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name: h.name, labels: { 'kubernetes.io/hostname': h.name } },
          spec: { podCIDR: cidr, podCIDRs: [cidr] },
        };
        await ctx.wet.run(
          ctx.inv.controlPlaneHosts[0]!.name,
          `create Node ${h.name} with podCIDR ${cidr}`,
          () => kubeJson(creds, 'POST', '/api/v1/nodes', { body }),
        );
        continue;
      }
      const have = got.json.spec?.podCIDR;
      if (have === cidr) continue;
      // spec.podCIDR can be set once and never changed (ValidateNodeUpdate).
      if (have)
        throw new StepError(
          'nodes',
          `Node ${h.name} has podCIDR ${have}, but the inventory gives it ${cidr}; the field cannot change: drain the node, "kubectl delete node ${h.name}", and re-run wire`,
          { host: h.name },
        );
      await ctx.wet.run(
        ctx.inv.controlPlaneHosts[0]!.name,
        `set Node ${h.name} podCIDR ${cidr}`,
        () =>
          kubeJson(creds, 'PATCH', `/api/v1/nodes/${h.name}`, {
            body: { spec: { podCIDR: cidr, podCIDRs: [cidr] } },
            contentType: 'application/strategic-merge-patch+json',
          }),
      );
    }
  },
};
