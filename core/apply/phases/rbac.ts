import type { Phase } from '../phase.ts';
import { superAdminCreds } from '../creds.ts';
import { kubeJson } from '../../transport/kube-api.ts';
import { StepError } from '../../../lib/errors.ts';

// kubeadm's model: admin.conf's group has no rights until this binding exists, so it can be
// revoked; only super-admin (system:masters) can create it.
export const CLUSTER_ADMINS_BINDING = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name: 'kubeadm:cluster-admins' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
  subjects: [
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'kubeadm:cluster-admins' },
  ],
};

// kubeadm's name and role for the apiserver's kubelet client (constants.go KubeletAPIAdminClusterRoleBindingName).
export const KUBELET_API_BINDING = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name: 'kubeadm:apiserver-kubelet-client' },
  roleRef: {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'ClusterRole',
    name: 'system:kubelet-api-admin',
  },
  subjects: [
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'kube-apiserver-kubelet-client' },
  ],
};

export const rbacPhase: Phase = {
  id: 'rbac',
  title:
    'Bind kubeadm:cluster-admins -> cluster-admin and the kubelet client -> system:kubelet-api-admin (as super-admin)',
  shouldRun: (ctx) => !ctx.opts.dryRun,
  async run(ctx) {
    const creds = superAdminCreds(ctx.clusterDir);
    const path = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
    for (const binding of [CLUSTER_ADMINS_BINDING, KUBELET_API_BINDING]) {
      const name = binding.metadata.name;
      const got = await kubeJson<{ roleRef?: { name?: string } }>(creds, 'GET', `${path}/${name}`, {
        allow: [404],
      });
      if (got.status === 200) {
        if (got.json.roleRef?.name !== binding.roleRef.name)
          throw new StepError(
            'rbac',
            `ClusterRoleBinding ${name} exists but does not grant ${binding.roleRef.name}; fix or delete it by hand`,
          );
        continue;
      }
      await ctx.wet.run(
        ctx.inv.controlPlaneHosts[0]!.name,
        `create ClusterRoleBinding ${name}`,
        () => kubeJson(creds, 'POST', path, { body: binding, allow: [409] }),
      );
    }
  },
};
