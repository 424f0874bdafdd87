import type { Phase } from '../phase.ts';
import { superAdminCreds } from '../creds.ts';
import { kubeJson, withServer } from '../../transport/kube-api.ts';
import { APISERVER_PORT } from '../../../lib/constants.ts';
import { KUBE_VIP_LEASE } from '../../components/models/kube-vip.ts';
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

// kube-vip's identity may create Leases and read and renew its own, in kube-system only: what
// client-go's leader election calls (Get, Create, Update), as the built-in system:kube-scheduler
// role allows the scheduler for its Lease.
export const KUBE_VIP_ROLE = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name: 'hardwire:kube-vip', namespace: 'kube-system' },
  rules: [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      resourceNames: [KUBE_VIP_LEASE],
      verbs: ['get', 'update'],
    },
  ],
};

export const KUBE_VIP_BINDING = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name: 'hardwire:kube-vip', namespace: 'kube-system' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'hardwire:kube-vip' },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-vip' }],
};

/** JSON with object keys sorted: the apiserver writes a rule's keys in its Go struct's order. */
function canon(x: unknown): string {
  return JSON.stringify(x, (_, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

const CLUSTER_BINDINGS = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
const KUBE_SYSTEM_RBAC = '/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system';

export const rbacPhase: Phase = {
  id: 'rbac',
  title:
    'Bind kubeadm:cluster-admins -> cluster-admin, the kubelet client -> system:kubelet-api-admin, and kube-vip to its Lease (as super-admin)',
  shouldRun: (ctx) => !ctx.opts.dryRun,
  async run(ctx) {
    // Through the first control-plane host's own address: the VIP, if any, comes up after this.
    const first = ctx.inv.controlPlaneHosts[0]!;
    const creds = withServer(
      superAdminCreds(ctx.clusterDir),
      `https://${first.address}:${APISERVER_PORT}`,
    );
    for (const binding of [CLUSTER_ADMINS_BINDING, KUBELET_API_BINDING]) {
      const name = binding.metadata.name;
      const got = await kubeJson<{ roleRef?: { name?: string } }>(
        creds,
        'GET',
        `${CLUSTER_BINDINGS}/${name}`,
        { allow: [404] },
      );
      if (got.status === 200) {
        if (got.json.roleRef?.name !== binding.roleRef.name)
          throw new StepError(
            'rbac',
            `ClusterRoleBinding ${name} exists but does not grant ${binding.roleRef.name}; fix or delete it by hand`,
          );
        continue;
      }
      await ctx.wet.run(first.name, `create ClusterRoleBinding ${name}`, () =>
        kubeJson(creds, 'POST', CLUSTER_BINDINGS, { body: binding, allow: [409] }),
      );
    }
    if (!ctx.inv.cluster.apiServerVip) return;
    for (const [kind, obj, field] of [
      ['roles', KUBE_VIP_ROLE, 'rules'],
      ['rolebindings', KUBE_VIP_BINDING, 'subjects'],
    ] as const) {
      const path = `${KUBE_SYSTEM_RBAC}/${kind}`;
      const got = await kubeJson<Record<string, unknown>>(
        creds,
        'GET',
        `${path}/${obj.metadata.name}`,
        { allow: [404] },
      );
      if (got.status === 404)
        await ctx.wet.run(first.name, `create ${obj.kind} kube-system/${obj.metadata.name}`, () =>
          kubeJson(creds, 'POST', path, { body: obj, allow: [409] }),
        );
      else if (canon(got.json[field]) !== canon(obj[field as keyof typeof obj]))
        throw new StepError(
          'rbac',
          `${obj.kind} kube-system/${obj.metadata.name} exists with other ${field} than hardwire's; fix or delete it by hand`,
        );
    }
  },
};
