// The metrics-server addon (cluster.addons: [metrics-server]): the objects of metrics-server v0.8.0's
// own manifests (MS manifests/base/, the release component's image name), adapted to the lab. Pure:
// core/apply/phases/addons.ts applies them and gates them (metricsServerGate). Citations name a line
// in the Go module cache (MS = sigs.k8s.io/metrics-server@v0.8.0); test/metrics-server-addon.test.ts
// re-opens each one listed in METRICS_SERVER_CITES.
import { ADDON_IMAGES } from '../components/images.ts';

/** Upstream's release image name (MS manifests/components/release/kustomization.yaml:5), built here and served by the lab registry. */
export const METRICS_SERVER_IMAGE = ADDON_IMAGES['metrics-server'].spec.ref;
export const METRICS_SERVER_MODULE = 'sigs.k8s.io/metrics-server@v0.8.0';
/** The APIService the aggregator registers: `kubectl top` reads /apis/metrics.k8s.io/v1beta1. */
export const METRICS_APISERVICE = 'v1beta1.metrics.k8s.io';
/** The CA every Pod's service-account volume holds (kube-root-ca.crt: the controller-manager's --root-ca-file, the cluster CA). */
const POD_CA = '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt';

export interface MsCite {
  file: string;
  line: number;
  holds: string;
}
const c = (file: string, line: number, holds: string): MsCite => ({ file, line, holds });
const D = 'manifests/base/deployment.yaml';
const R = 'manifests/base/rbac.yaml';
const KC = 'cmd/metrics-server/app/options/kubelet_client.go';
/** Every citation in this file's comments, with text its line holds. */
export const METRICS_SERVER_CITES: MsCite[] = [
  c(
    'manifests/components/release/kustomization.yaml',
    5,
    'newName: registry.k8s.io/metrics-server/metrics-server',
  ),
  c('manifests/base/kustomization.yaml', 4, 'k8s-app: metrics-server'),
  c(R, 5, 'name: system:aggregated-metrics-reader'),
  c(R, 24, 'name: metrics-server-auth-reader'),
  c(R, 29, 'name: extension-apiserver-authentication-reader'),
  c(R, 38, 'name: metrics-server:system:auth-delegator'),
  c(R, 51, 'name: system:metrics-server'),
  c(R, 55, '- nodes/metrics'),
  c('manifests/base/service.yaml', 12, 'targetPort: https'),
  c(D, 10, 'maxUnavailable: 0'),
  c(D, 17, 'emptyDir: {}'),
  c(D, 18, 'priorityClassName: system-cluster-critical'),
  c(D, 24, '- --cert-dir=/tmp'),
  c(D, 25, '- --secure-port=10250'),
  c(D, 26, '- --kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname'),
  c(D, 27, '- --kubelet-use-node-status-port'),
  c(D, 28, '- --metric-resolution=15s'),
  c(D, 31, 'cpu: 100m'),
  c(D, 37, 'readinessProbe:'),
  c(D, 45, 'livenessProbe:'),
  c(D, 52, 'securityContext:'),
  c(KC, 73, '"kubelet-insecure-tls"'),
  c(KC, 77, '"kubelet-certificate-authority"'),
  c('manifests/base/apiservice.yaml', 12, 'insecureSkipTLSVerify: true'),
  c('pkg/server/server.go', 149, 'probeMetricStorageReady("metric-storage-ready")'),
];

const NS = 'kube-system';
const NAME = 'metrics-server';
// kustomize's commonLabels put one label on every object and selector (MS manifests/base/kustomization.yaml:4).
const LABELS = { 'k8s-app': NAME };
const rbac = 'rbac.authorization.k8s.io';
const SUBJECTS = [{ kind: 'ServiceAccount', name: NAME, namespace: NS }];

/** The container's arguments: upstream's five, and the kubelets' CA in place of trusting any. */
export function metricsServerArgs(): string[] {
  return [
    // Its serving pair, self-signed at start into the emptyDir (MS manifests/base/deployment.yaml:24, :17).
    '--cert-dir=/tmp',
    '--secure-port=10250', // MS manifests/base/deployment.yaml:25
    // Upstream's order (MS manifests/base/deployment.yaml:26): the lab Nodes report an InternalIP, and
    // a Pod could not resolve a node's hostname (CoreDNS forwards nowhere).
    '--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname',
    '--kubelet-use-node-status-port', // MS manifests/base/deployment.yaml:27
    '--metric-resolution=15s', // MS manifests/base/deployment.yaml:28
    // Added: the kubelets' serving certs are signed by the cluster CA (kubelet-server in the certificate
    // table), which every Pod's service-account volume holds as ca.crt. So each scrape verifies the
    // kubelet (MS cmd/metrics-server/app/options/kubelet_client.go:77) and --kubelet-insecure-tls, the
    // usual advice for a hand-made cluster (MS cmd/metrics-server/app/options/kubelet_client.go:73), is not needed.
    `--kubelet-certificate-authority=${POD_CA}`,
  ];
}

function deployment(): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: NAME, namespace: NS, labels: LABELS },
    spec: {
      replicas: 1,
      selector: { matchLabels: LABELS },
      // A new Pod is Ready before the old one goes (MS manifests/base/deployment.yaml:10).
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } },
      template: {
        metadata: { labels: LABELS },
        spec: {
          serviceAccountName: NAME,
          // Evicted last, as CoreDNS (MS manifests/base/deployment.yaml:18).
          priorityClassName: 'system-cluster-critical',
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          volumes: [{ name: 'tmp-dir', emptyDir: {} }],
          containers: [
            {
              name: NAME,
              image: METRICS_SERVER_IMAGE,
              imagePullPolicy: 'IfNotPresent',
              args: metricsServerArgs(),
              // Upstream's requests (MS manifests/base/deployment.yaml:31).
              resources: { requests: { cpu: '100m', memory: '200Mi' } },
              ports: [{ name: 'https', containerPort: 10250, protocol: 'TCP' }],
              // Ready once it holds a scrape of every node (MS pkg/server/server.go:149): the APIService
              // is Available only then (MS manifests/base/deployment.yaml:37, :45).
              readinessProbe: {
                httpGet: { path: '/readyz', port: 'https', scheme: 'HTTPS' },
                periodSeconds: 10,
                failureThreshold: 3,
                initialDelaySeconds: 20,
              },
              livenessProbe: {
                httpGet: { path: '/livez', port: 'https', scheme: 'HTTPS' },
                periodSeconds: 10,
                failureThreshold: 3,
              },
              // Upstream's, whole (MS manifests/base/deployment.yaml:52).
              securityContext: {
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                runAsUser: 1000,
                allowPrivilegeEscalation: false,
                seccompProfile: { type: 'RuntimeDefault' },
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [{ name: 'tmp-dir', mountPath: '/tmp' }],
            },
          ],
        },
      },
    },
  };
}

/** Upstream's nine objects, in an order each can be created in (the APIService last, once its Service exists). */
export function metricsServerObjects(): object[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: NAME, namespace: NS, labels: LABELS },
    },
    // Reading metrics.k8s.io, aggregated into view, edit and admin (MS manifests/base/rbac.yaml:5).
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRole',
      metadata: {
        name: 'system:aggregated-metrics-reader',
        labels: {
          ...LABELS,
          'rbac.authorization.k8s.io/aggregate-to-view': 'true',
          'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
          'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
        },
      },
      rules: [
        {
          apiGroups: ['metrics.k8s.io'],
          resources: ['pods', 'nodes'],
          verbs: ['get', 'list', 'watch'],
        },
      ],
    },
    // What it reads: each kubelet's /metrics/resource (nodes/metrics, MS manifests/base/rbac.yaml:55),
    // and the Nodes and Pods it reports on (MS manifests/base/rbac.yaml:51).
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRole',
      metadata: { name: 'system:metrics-server', labels: LABELS },
      rules: [
        { apiGroups: [''], resources: ['nodes/metrics'], verbs: ['get'] },
        { apiGroups: [''], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] },
      ],
    },
    // The front-proxy CA and header names from kube-system/extension-apiserver-authentication, so it
    // trusts the aggregator's requests (MS manifests/base/rbac.yaml:24, :29).
    {
      apiVersion: `${rbac}/v1`,
      kind: 'RoleBinding',
      metadata: { name: 'metrics-server-auth-reader', namespace: NS, labels: LABELS },
      roleRef: { apiGroup: rbac, kind: 'Role', name: 'extension-apiserver-authentication-reader' },
      subjects: SUBJECTS,
    },
    // TokenReviews and SubjectAccessReviews for its own callers (MS manifests/base/rbac.yaml:38).
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'metrics-server:system:auth-delegator', labels: LABELS },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: SUBJECTS,
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:metrics-server', labels: LABELS },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'system:metrics-server' },
      subjects: SUBJECTS,
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: NAME, namespace: NS, labels: LABELS },
      spec: {
        selector: LABELS,
        // 443 to the container's named port (MS manifests/base/service.yaml:12).
        ports: [
          { name: 'https', port: 443, protocol: 'TCP', targetPort: 'https', appProtocol: 'https' },
        ],
      },
    },
    deployment(),
    {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: METRICS_APISERVICE, labels: LABELS },
      spec: {
        service: { name: NAME, namespace: NS, port: 443 },
        group: 'metrics.k8s.io',
        version: 'v1beta1',
        // As upstream (MS manifests/base/apiservice.yaml:12): its serving cert is made at each start
        // in the emptyDir, so there is no CA to give a caBundle. The aggregator still reaches it only
        // at its Pod's address, and authenticates itself with the front-proxy client cert.
        insecureSkipTLSVerify: true,
        groupPriorityMinimum: 100,
        versionPriority: 100,
      },
    },
  ];
}
