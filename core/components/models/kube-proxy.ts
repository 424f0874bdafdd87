// kube-proxy of a worker: ClusterIP Services, from a KubeProxyConfiguration. The flag map cites the
// unit's flags and each config field (its v1alpha1 declaration, the conversion that moves it, where
// kube-proxy reads it); the reasons' own K file:line refs are re-opened by test/worker-citations.test.ts.
import { flag, K, BIN, nodeOf, type ModelContext, type UnitModel } from './types.ts';
import { configYaml, type ConfigField } from './config-file.ts';

export const KUBE_PROXY_CONFIG = '/var/lib/kube-proxy/config.conf';
export const KUBE_PROXY_KUBECONFIG = `${K}/kube-proxy.conf`;

export function kubeProxyConfig(ctx: ModelContext): string {
  return configYaml(
    {
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      comment: `Rendered by hardwire for ${ctx.host.name} (components/models/kube-proxy.ts).`,
    },
    kubeProxyFields(ctx),
    ctx.citeConfig && ((k) => ctx.citeConfig!('kube-proxy', k)),
  );
}

/** nftables mode: what kube-proxy runs on every hardwire host, and on compare's kubeadm plane (harness/planes/kubeadm-init.ts). */
const NFTABLES_MODE: ConfigField = {
  key: 'mode',
  value: 'nftables',
  why: "nftables, not iptables: the lab kernel (6.18) is past the 5.13 kube-proxy requires for it (K pkg/util/kernel/constants.go:52, checked at K pkg/proxy/nftables/supported.go:64-71; preflight checks every worker's kernel), and Debian 12's iptables is the iptables-nft front end to the same nf_tables anyway, so iptables mode would reach the kernel through a translation layer. Either mode execs a userspace tool (nft through sigs.k8s.io/knftables, K pkg/proxy/nftables/supported.go:48); the lab rootfs carries Debian's nftables package for it (harness/lab/rootfs.ts), and kubeadm's kube-proxy image a copy of that nft with its libraries (harness/planes/kube-proxy-image.ts)",
};

/** On a host that may not write nf_conntrack_max (a container: it is its machine's), kube-proxy leaves the conntrack sysctls alone. */
const CONNTRACK_UNTOUCHED: ConfigField = {
  key: 'conntrack',
  value: { maxPerCore: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  why: "leave the conntrack sysctls as they are: this host cannot write nf_conntrack_max (read by preflight: in a lab container /proc/sys is read-only and the value is the machine's); 0 skips each write (K pkg/proxy/conntrack/sysctls.go:60-80, 111), as kind does",
};

/** What kube-proxy needs on a lab container whoever runs it: compare's kubeadm plane sets the same. */
export const KUBE_PROXY_IN_A_LAB_HOST: ConfigField[] = [NFTABLES_MODE, CONNTRACK_UNTOUCHED];

/**
 * Each start begins with no kube-proxy table, as a first start does. On a restart over its own
 * tables kube-proxy reads back the elements of each map and set with `nft --json list`
 * (nftElementStorage.readOrReset, K pkg/proxy/nftables/proxier.go:980) and keeps the keys it finds;
 * Debian 12's nft 1.0.6 prints the inet_proto of a concatenated key as a number (6, 17), where
 * kube-proxy builds its keys with the name (tcp, udp: K pkg/proxy/nftables/proxier.go:1196) and
 * knftables expects the name too (sigs.k8s.io/knftables@v0.0.21 nftables.go:616-620). So every key
 * read back looks stale, and the same sync that re-adds "10.96.0.10 . udp . 53" deletes
 * "10.96.0.10 . 17 . 53", the same element (cleanupLeftoverKeys, K pkg/proxy/nftables/proxier.go:1039):
 * every second restart leaves service-ips empty, no ClusterIP is DNATed and a Pod's DNS lookup times
 * out. Measured on a lab host: service-ips had 5, 0, 5 elements after three restarts, v1.36.3 and
 * v1.37.2 alike; `upgrade apply` is the first restart after wire.
 */
const KUBE_PROXY_FRESH_TABLES = (['ip', 'ip6'] as const).map((family) => ({
  key: 'ExecStartPre',
  value: `-/usr/sbin/nft delete table ${family} kube-proxy`,
  why: `start from no ${family} kube-proxy table: on a restart over its own table kube-proxy deletes the keys of its service-ips map it reads back, because nft 1.0.6 prints their protocol as a number and kube-proxy writes its name (K pkg/proxy/nftables/proxier.go:980, 1196, 1039; models/kube-proxy.ts); "-": no table on the first start`,
}));

/** Every KubeProxyConfiguration field hardwire sets, with its reason (the flag map cites each). */
export function kubeProxyFields(ctx: ModelContext): ConfigField[] {
  const { inv, host } = ctx;
  return [
    {
      key: 'clientConnection',
      value: { kubeconfig: KUBE_PROXY_KUBECONFIG },
      why: 'its identity toward the apiserver: system:kube-proxy, which the built-in system:node-proxier binding authorizes',
    },
    {
      key: 'hostnameOverride',
      value: host.name,
      why: "the Node it serves is the kubelet's --hostname-override, not the host name the container reports",
    },
    {
      key: 'clusterCIDR',
      value: inv.cluster.podCIDR,
      why: 'traffic from outside the pod range to a Service is masqueraded, so replies come back through this node',
    },
    NFTABLES_MODE,
    // Where it may, kube-proxy sizes the conntrack table and timeouts itself (its defaults).
    ...(nodeOf(ctx).conntrackWritable ? [] : [CONNTRACK_UNTOUCHED]),
  ];
}

export function kubeProxyModel(ctx: ModelContext): UnitModel {
  return {
    component: 'kube-proxy',
    description: 'Kubernetes network proxy (hardwire)',
    documentation: 'https://kubernetes.io/docs/reference/command-line-tools-reference/kube-proxy/',
    type: 'simple',
    binary: `${BIN}/kube-proxy`,
    files: [
      {
        path: KUBE_PROXY_CONFIG,
        content: kubeProxyConfig(ctx),
        fields: kubeProxyFields(ctx),
        mode: 0o644,
        why: 'the KubeProxyConfiguration (--config), rendered per node',
      },
    ],
    directives: KUBE_PROXY_FRESH_TABLES,
    flags: [
      flag(
        'config',
        KUBE_PROXY_CONFIG,
        'every setting is in the config file, with its reason (K cmd/kube-proxy/app/options.go:102)',
      ),
    ],
  };
}
