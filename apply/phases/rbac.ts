import type { Phase } from '../phase.ts';
import { superAdminCreds } from '../creds.ts';
import { kubeJson } from '../../kube/client.ts';
import { StepError } from '../../lib/errors.ts';

// kubeadm's model: admin.conf's group has no rights until this binding exists, so it can be
// revoked; only super-admin (system:masters) can create it.
export const CLUSTER_ADMINS_BINDING = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name: 'kubeadm:cluster-admins' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'kubeadm:cluster-admins' }],
};

export const rbacPhase: Phase = {
  id: 'rbac',
  title: 'Bind kubeadm:cluster-admins to cluster-admin (as super-admin)',
  shouldRun: (ctx) => !ctx.opts.dryRun,
  async run(ctx) {
    const creds = superAdminCreds(ctx.clusterDir);
    const path = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
    const got = await kubeJson<{ roleRef?: { name?: string } }>(creds, 'GET', `${path}/kubeadm:cluster-admins`, { allow: [404] });
    if (got.status === 200) {
      if (got.json.roleRef?.name !== 'cluster-admin') throw new StepError('rbac', 'ClusterRoleBinding kubeadm:cluster-admins exists but does not grant cluster-admin; fix or delete it by hand');
      return;
    }
    await ctx.wet.run(ctx.inv.controlPlaneHosts[0]!.name, 'create ClusterRoleBinding kubeadm:cluster-admins', () => kubeJson(creds, 'POST', path, { body: CLUSTER_ADMINS_BINDING, allow: [409] }));
  },
};
