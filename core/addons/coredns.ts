// The CoreDNS addon: the objects kubeadm v1.36.3 deploys (K cmd/kubeadm/app/phases/addons/dns/manifests.go:21),
// adapted to the lab. Pure: core/apply/phases/addons.ts applies them. Citations name a line in the Go
// module cache (K = k8s.io/kubernetes@v1.36.3, CD = github.com/coredns/coredns@v1.14.2);
// test/coredns-addon.test.ts re-opens each one listed in COREDNS_CITES.
import { IMAGES } from '../components/images.ts';
import type { Inventory } from '../inventory/load.ts';
import { indexedIp } from '../../lib/net.ts';
import { CITED_MODULES } from '../components/models/config-file.ts';

/** Built locally and loaded into each worker's containerd, never pulled; the tag is kubeadm's (K cmd/kubeadm/app/constants/constants.go:372). */
export const COREDNS_IMAGE = IMAGES.coredns.ref;

export interface AddonCite {
  mod: 'K' | 'CD';
  file: string;
  line: number;
  holds: string;
}
export const ADDON_MODULES: Record<AddonCite['mod'], string> = {
  K: CITED_MODULES.K,
  CD: 'github.com/coredns/coredns@v1.14.2',
};

const M = 'cmd/kubeadm/app/phases/addons/dns/manifests.go';
const k = (file: string, line: number, holds: string): AddonCite => ({
  mod: 'K',
  file,
  line,
  holds,
});
/** Every citation in this file's comments, with text its line holds. */
export const COREDNS_CITES: AddonCite[] = [
  k(M, 21, 'CoreDNSService ='),
  k('cmd/kubeadm/app/constants/constants.go', 372, 'CoreDNSVersion = "v1.14.2"'),
  k('cmd/kubeadm/app/constants/constants.go', 688, 'GetIndexedIP(svcSubnetCIDR, 10)'),
  k(
    'cmd/kubeadm/app/constants/constants.go',
    279,
    'LabelNodeRoleControlPlane = "node-role.kubernetes.io/control-plane"',
  ),
  k('cmd/kubeadm/app/phases/addons/dns/dns.go', 51, 'coreDNSReplicas       = 2'),
  k(M, 36, 'resourceVersion: "0"'),
  k(M, 38, 'clusterIP: {{ .DNSIP }}'),
  k(M, 79, 'priorityClassName: system-cluster-critical'),
  k(M, 82, 'podAntiAffinity:'),
  k(M, 95, 'key: {{ .ControlPlaneTaintKey }}'),
  k(M, 102, 'imagePullPolicy: IfNotPresent'),
  k(M, 109, 'args: [ "-conf", "/etc/coredns/Corefile" ]'),
  k(M, 130, 'livenessProbe:'),
  k(M, 139, 'readinessProbe:'),
  k(M, 144, 'securityContext:'),
  k(M, 152, 'dnsPolicy: Default'),
  k(M, 171, '.:53 {'),
  k(M, 183, 'forward . /etc/resolv.conf {'),
  k(M, 188, 'disable success {{ .DNSDomain }}'),
  k(M, 198, 'CoreDNSClusterRole ='),
  {
    mod: 'CD',
    file: 'plugin/kubernetes/handler.go',
    line: 19,
    holds: 'return plugin.NextOrFailure(k.Name(), k.Next, ctx, w, r)',
  },
  {
    mod: 'CD',
    file: 'plugin/plugin.go',
    line: 86,
    holds: 'dns.RcodeServerFailure, Error(name, errors.New("no next plugin found"))',
  },
];

const NS = 'kube-system';
const LABELS = { 'k8s-app': 'kube-dns' };

/** The Corefile, kubeadm's (K cmd/kubeadm/app/phases/addons/dns/manifests.go:171) less its forward plugin. */
export function corefile(domain: string): string {
  // No `forward . /etc/resolv.conf` (K cmd/kubeadm/app/phases/addons/dns/manifests.go:183): lab hosts
  // have no upstream resolver and no traffic may leave the machine. A name outside the cluster zones
  // then falls off the end of the chain (CD plugin/kubernetes/handler.go:19) and gets SERVFAIL at once
  // (CD plugin/plugin.go:86), which `errors` logs, instead of a timeout.
  // cache skips the cluster zone so Service changes show at once (K cmd/kubeadm/app/phases/addons/dns/manifests.go:188).
  return `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes ${domain} in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    cache 30 {
       disable success ${domain}
       disable denial ${domain}
    }
    loop
    reload
    loadbalance
}
`;
}

/** kube-dns's address: the 10th of the service CIDR (K cmd/kubeadm/app/constants/constants.go:688), the kubelets' clusterDNS. */
export function dnsServiceIp(inv: Inventory): string {
  return indexedIp(inv.serviceCidr, 10);
}

/**
 * kubeadm runs 2 (K cmd/kubeadm/app/phases/addons/dns/dns.go:51) so DNS outlives one node. Only
 * workers are Nodes here, and two replicas on one node buy nothing against its loss while they
 * double the requests on a machine of 2 shared cores: 2 with two or more workers, else 1.
 */
export function corednsReplicas(inv: Inventory): number {
  return Math.min(2, Math.max(1, inv.workerHosts.length));
}

function deployment(inv: Inventory): object {
  const port = (containerPort: number, name: string, protocol = 'TCP') => ({
    containerPort,
    name,
    protocol,
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'coredns', namespace: NS, labels: LABELS },
    spec: {
      replicas: corednsReplicas(inv),
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
      selector: { matchLabels: LABELS },
      template: {
        metadata: { labels: LABELS },
        spec: {
          // Kept from kubeadm: evicted last (K cmd/kubeadm/app/phases/addons/dns/manifests.go:79),
          // spread over nodes when it can be (K cmd/kubeadm/app/phases/addons/dns/manifests.go:82).
          priorityClassName: 'system-cluster-critical',
          serviceAccountName: 'coredns',
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  podAffinityTerm: {
                    labelSelector: {
                      matchExpressions: [{ key: 'k8s-app', operator: 'In', values: ['kube-dns'] }],
                    },
                    topologyKey: 'kubernetes.io/hostname',
                  },
                },
              ],
            },
          },
          // The control-plane taint key (K cmd/kubeadm/app/phases/addons/dns/manifests.go:95, K cmd/kubeadm/app/constants/constants.go:279).
          tolerations: [
            { key: 'CriticalAddonsOnly', operator: 'Exists' },
            { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' },
          ],
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          containers: [
            {
              name: 'coredns',
              image: COREDNS_IMAGE,
              // Never pulled, but IfNotPresent as kubeadm (K cmd/kubeadm/app/phases/addons/dns/manifests.go:102):
              // an image missing from a node shows as the kubelet's own ErrImagePull.
              imagePullPolicy: 'IfNotPresent',
              resources: { limits: { memory: '170Mi' }, requests: { cpu: '100m', memory: '70Mi' } },
              args: ['-conf', '/etc/coredns/Corefile'], // K cmd/kubeadm/app/phases/addons/dns/manifests.go:109
              volumeMounts: [{ name: 'config-volume', mountPath: '/etc/coredns', readOnly: true }],
              ports: [
                port(53, 'dns', 'UDP'),
                port(53, 'dns-tcp'),
                port(9153, 'metrics'),
                port(8080, 'liveness-probe'),
                port(8181, 'readiness-probe'),
              ],
              // The health and ready plugins' ports (K cmd/kubeadm/app/phases/addons/dns/manifests.go:130, K cmd/kubeadm/app/phases/addons/dns/manifests.go:139).
              livenessProbe: {
                httpGet: { path: '/health', port: 'liveness-probe', scheme: 'HTTP' },
                initialDelaySeconds: 60,
                timeoutSeconds: 5,
                successThreshold: 1,
                failureThreshold: 5,
              },
              readinessProbe: {
                httpGet: { path: '/ready', port: 'readiness-probe', scheme: 'HTTP' },
              },
              // Binds :53 without root powers (K cmd/kubeadm/app/phases/addons/dns/manifests.go:144).
              securityContext: {
                allowPrivilegeEscalation: false,
                capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] },
                readOnlyRootFilesystem: true,
              },
            },
          ],
          // The node's resolv.conf, so CoreDNS never asks itself (K cmd/kubeadm/app/phases/addons/dns/manifests.go:152);
          // kept though nothing forwards to it now.
          dnsPolicy: 'Default',
          volumes: [
            {
              name: 'config-volume',
              configMap: { name: 'coredns', items: [{ key: 'Corefile', path: 'Corefile' }] },
            },
          ],
        },
      },
    },
  };
}

/** ServiceAccount, ClusterRole, ClusterRoleBinding, ConfigMap, Deployment, Service: in the order they can be created. */
export function corednsObjects(inv: Inventory): object[] {
  const rbac = 'rbac.authorization.k8s.io';
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace: NS } },
    // Read-only access to what the kubernetes plugin serves (K cmd/kubeadm/app/phases/addons/dns/manifests.go:198).
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRole',
      metadata: { name: 'system:coredns' },
      rules: [
        {
          apiGroups: [''],
          resources: ['endpoints', 'services', 'pods', 'namespaces'],
          verbs: ['list', 'watch'],
        },
        {
          apiGroups: ['discovery.k8s.io'],
          resources: ['endpointslices'],
          verbs: ['list', 'watch'],
        },
      ],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:coredns' },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'system:coredns' },
      subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: NS }],
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'coredns', namespace: NS },
      data: { Corefile: corefile(inv.cluster.dnsDomain) },
    },
    deployment(inv),
    {
      apiVersion: 'v1',
      kind: 'Service',
      // No resourceVersion "0" (K cmd/kubeadm/app/phases/addons/dns/manifests.go:36): that serves
      // kubeadm's update path; a create must not carry one, and our PUT takes the live one.
      metadata: {
        name: 'kube-dns',
        namespace: NS,
        labels: {
          ...LABELS,
          'kubernetes.io/cluster-service': 'true',
          'kubernetes.io/name': 'CoreDNS',
        },
        annotations: { 'prometheus.io/port': '9153', 'prometheus.io/scrape': 'true' },
      },
      spec: {
        clusterIP: dnsServiceIp(inv), // K cmd/kubeadm/app/phases/addons/dns/manifests.go:38
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
          { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
          { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
        ],
        selector: LABELS,
      },
    },
  ];
}
