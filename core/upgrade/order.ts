// The order an upgrade rolls the components in, each step with the version-skew rule that puts it
// there: Kubernetes' version-skew policy (kubernetes/website content/en/releases/version-skew-policy.md).
import { UPGRADE_GROUPS, type UpgradeStep } from '../components/registry/index.ts';

export interface Step {
  components: string[];
  rule: string;
  cite: string;
}

const SKEW = 'https://kubernetes.io/releases/version-skew-policy/';

/** Each step's rule; which components are in it is the registry's (each spec's upgradeStep). */
const RULES: Record<UpgradeStep, Omit<Step, 'components'>> = {
  etcd: {
    rule: 'The version-skew policy names no etcd rule; kubeadm upgrades the local etcd before the rest of the control plane ("Upgrade the rest of the control plane components" follows performEtcdStaticPodUpgrade), to the etcd it pins for the target.',
    cite: 'k8s.io/kubernetes@v1.37.2/cmd/kubeadm/app/phases/upgrade/staticpods.go:486 and :495; constants.go:330 (DefaultEtcdVersion = "3.7.0-0")',
  },
  'kube-apiserver': {
    rule: 'In highly-available (HA) clusters, the newest and oldest kube-apiserver instances must be within one minor version. Project policies for API deprecation and API change guidelines require kube-apiserver to not skip minor versions when upgrading, even in single-instance clusters.',
    cite: `${SKEW}#supported-version-skew (kube-apiserver) and #supported-component-upgrade-order (kube-apiserver, note)`,
  },
  controllers: {
    rule: 'kube-controller-manager, kube-scheduler, and cloud-controller-manager must not be newer than the kube-apiserver instances they communicate with. … all kube-apiserver instances must be upgraded before upgrading these components. There is no required upgrade order between kube-controller-manager, kube-scheduler, and cloud-controller-manager.',
    cite: `${SKEW}#supported-version-skew and #supported-component-upgrade-order (kube-controller-manager, kube-scheduler, and cloud-controller-manager)`,
  },
  node: {
    rule: 'kubelet must not be newer than kube-apiserver. kube-proxy must not be newer than kube-apiserver. Before performing a minor version kubelet upgrade, drain pods from that node.',
    cite: `${SKEW}#supported-version-skew (kubelet, kube-proxy) and #supported-component-upgrade-order (kubelet, note)`,
  },
};

/** The steps for the components this inventory runs, in upgrade order. */
export function upgradeOrder(components: readonly string[]): Step[] {
  return UPGRADE_GROUPS.map((g) => ({
    components: g.components.filter((c) => components.includes(c)),
    ...RULES[g.step],
  })).filter((s) => s.components.length > 0);
}
