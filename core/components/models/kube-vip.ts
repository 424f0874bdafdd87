// kube-vip in control-plane ARP mode: one control-plane host at a time holds cluster.apiServerVip
// on its interface and answers ARP for it; the others stand by. Who holds it is a Lease in
// kube-system, renewed through the host's own kube-apiserver, so the address follows a live
// apiserver. kube-vip is not Kubernetes: it has no flag map, so each flag's read site is cited here
// (KV = github.com/kube-vip/kube-vip@v1.0.0), and test/kube-vip-citations.test.ts re-opens each one.
import { APISERVER_PORT } from '../../../lib/constants.ts';
import {
  flag,
  K,
  BIN,
  type Directive,
  type Flag,
  type ModelContext,
  type UnitModel,
} from './types.ts';

export const KUBE_VIP_MODULE = 'github.com/kube-vip/kube-vip@v1.0.0';
export const KUBE_VIP_LEASE = 'plndr-cp-lock';
/** Seconds a holder keeps the Lease without renewing it: how long the VIP can stay on a dead host. */
export const KUBE_VIP_LEASE_SECONDS = 5;
/** The only kubeconfig path kube-vip v1.0.0 reads on a control-plane host (KV pkg/manager/manager.go:89). */
export const KUBE_VIP_READS = `${K}/admin.conf`;
export const KUBE_VIP_CONF = `${K}/kube-vip.conf`;
/** Its own /etc/hosts, bind-mounted in its unit: "kubernetes" is this host's apiserver, as kube-vip's static Pod's hostAliases make it. */
export const KUBE_VIP_HOSTS = `${K}/kube-vip-hosts`;

const read = (file: string, line: number) => `${KUBE_VIP_MODULE}/${file}:${line}`;

function cited(name: string, value: string | number | boolean, why: string, at: string): Flag {
  return { ...flag(name, value, why), readAt: at };
}

export function kubeVipModel({ inv, host }: ModelContext): UnitModel {
  const vip = inv.cluster.apiServerVip;
  if (!vip) throw new Error(`${host.name} runs kube-vip, but cluster.apiServerVip is not set`);
  const directives: Directive[] = [
    {
      key: 'BindReadOnlyPaths',
      value: `${KUBE_VIP_CONF}:${KUBE_VIP_READS} ${KUBE_VIP_HOSTS}:/etc/hosts`,
      why: `the manager reads ${KUBE_VIP_READS} (KV pkg/manager/manager.go:89); --k8sConfigPath only names the host file its generated static Pod mounts there (KV pkg/kubevip/config_generator.go:615-622). This is that mount: its own identity, system:kube-vip, which may only hold its Lease. And its own /etc/hosts, where "kubernetes" is 127.0.0.1: the manager talks to kubernetes:--port (KV pkg/manager/manager.go:111), so it renews through this host's apiserver only`,
    },
    {
      key: 'CapabilityBoundingSet',
      value: 'CAP_NET_ADMIN CAP_NET_RAW',
      why: 'all it needs: add and delete the address (netlink) and send gratuitous ARP (a raw socket)',
    },
    {
      key: 'Restart',
      value: 'always',
      why: 'it exits 0 when its manager cannot be made or started (KV cmd/kube-vip.go:380-383, :389-392), as when its own apiserver is not up yet, and panics when it loses the Lease (KV pkg/cluster/clusterLeaderElection.go:202); either way systemd starts it again',
    },
  ];
  const hosts = `# Rendered by hardwire: kube-vip's /etc/hosts, bind-mounted in its unit (BindReadOnlyPaths).
# Its manager talks to kubernetes:${APISERVER_PORT} (KV pkg/manager/manager.go:111): here, this host's own
# kube-apiserver, whose certificate names "kubernetes". kube-vip's static Pod does the same with hostAliases.
127.0.0.1 localhost kubernetes
`;
  return {
    component: 'kube-vip',
    files: [
      {
        path: KUBE_VIP_HOSTS,
        content: hosts,
        mode: 0o644,
        why: 'its own /etc/hosts: "kubernetes" is this host\'s apiserver',
      },
    ],
    description: 'kube-vip: the API virtual address (hardwire)',
    documentation: 'https://kube-vip.io/docs/',
    type: 'simple',
    binary: `${BIN}/kube-vip`,
    args: [{ word: 'manager', why: 'the daemon (KV cmd/kube-vip.go:241)' }],
    directives,
    flags: [
      cited(
        'address',
        vip.address,
        'the cluster endpoint every kubelet, kube-proxy and admin.conf uses',
        read('pkg/cluster/cluster.go', 49),
      ),
      cited(
        'interface',
        vip.interface,
        'the leader adds the address here and answers ARP for it',
        read('pkg/cluster/cluster.go', 57),
      ),
      cited(
        'arp',
        true,
        'layer 2: the new holder sends gratuitous ARP so hosts and the bridge learn its MAC at once',
        read('pkg/cluster/service.go', 96),
      ),
      cited(
        'controlplane',
        true,
        'front kube-apiserver (not Services of type LoadBalancer)',
        read('pkg/manager/manager_arp.go', 46),
      ),
      cited(
        'port',
        APISERVER_PORT,
        "kube-vip's default, spelled out: it reaches its apiserver at kubernetes:<port>, this host's own kube-apiserver through its /etc/hosts, so a host whose apiserver is down cannot renew and gives the address up. Not --autodetectcp: that takes the first address of the local certificate that answers, another host's while the local apiserver starts, and exits if none does",
        read('pkg/manager/manager.go', 111),
      ),
      cited(
        'nodeName',
        host.name,
        'its name as the Lease holder, the same as the Node',
        read('pkg/cluster/clusterLeaderElection.go', 165),
      ),
      cited(
        'leaseName',
        KUBE_VIP_LEASE,
        "kube-vip's default, spelled out: the Lease in kube-system the gate and drills read",
        read('pkg/cluster/clusterLeaderElection.go', 242),
      ),
      cited(
        'leaseDuration',
        KUBE_VIP_LEASE_SECONDS,
        "kube-vip's default, spelled out: a holder that stops renewing loses the address to a standby within this many seconds",
        read('pkg/cluster/clusterLeaderElection.go', 262),
      ),
      cited(
        'prometheusHTTPServer',
        '127.0.0.1:2112',
        'metrics on loopback only; the default (:2112) listens on every address',
        read('cmd/kube-vip.go', 274),
      ),
    ],
  };
}
