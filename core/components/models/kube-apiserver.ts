import { flag, PKI, K, BIN, type ModelContext, type UnitModel } from './types.ts';
import { APISERVER_PORT, ETCD_CLIENT_PORT } from '../../../lib/constants.ts';
import { AUDIT_LOG_PATH, AUDIT_POLICY, AUDIT_POLICY_PATH } from './audit-policy.ts';
import { podRoutes } from './containerd.ts';
import { AUTHN_CONFIG, AUTHN_CONFIG_PATH, AUTHN_CONFIG_WHY } from './authentication-config.ts';
import { CIS_TLS_CIPHERS } from './kubelet.ts';

/**
 * On a control-plane host with no kubelet: a Pod that calls the kubernetes Service reaches this host
 * with its own Pod address (kube-proxy DNATs, no masquerade), and the apiserver calls webhooks at Pod
 * addresses (--enable-aggregator-routing); both replies need a route to the Pod's node, since lab
 * hosts have no default route. Kelsey Hightower's guide adds the same routes on its server. Seen on
 * a 2-host lab (node1 control plane, node2 worker): without them CoreDNS never reached the apiserver.
 */
const WHY_ROUTES =
  ': this host runs no kubelet, but Pods reach it through the kubernetes Service with their own address, and it calls webhooks at Pod addresses';

export function apiserverModel({ inv, host }: ModelContext): UnitModel {
  // An anonymous-auth the inventory sets (CIS-strict false, or an allowed true) is the user's choice
  // of anonymous auth, and kube-apiserver refuses the flag beside a file with an anonymous block.
  const authn = inv.cluster.extraArgs['kube-apiserver']?.['anonymous-auth'] === undefined;
  const etcdServers = inv.etcdHosts
    .map((h) => `https://${h.address}:${ETCD_CLIENT_PORT}`)
    .join(',');
  const issuer = `https://kubernetes.default.svc.${inv.cluster.dnsDomain}`;
  return {
    component: 'kube-apiserver',
    description: 'Kubernetes API server (hardwire)',
    documentation:
      'https://kubernetes.io/docs/reference/command-line-tools-reference/kube-apiserver/',
    type: 'simple',
    binary: `${BIN}/kube-apiserver`,
    files: [
      {
        path: AUDIT_POLICY_PATH,
        content: AUDIT_POLICY,
        mode: 0o600,
        why: 'what the apiserver writes to its audit log (--audit-policy-file)',
      },
      ...(authn
        ? [
            {
              path: AUTHN_CONFIG_PATH,
              content: AUTHN_CONFIG,
              mode: 0o600,
              why: 'who may call the apiserver without credentials, and where (--authentication-config)',
            },
          ]
        : []),
    ],
    // A control-plane host that is no worker runs no containerd, whose unit adds these routes on workers.
    ...(host.isWorker ? {} : { directives: podRoutes({ inv, host }, WHY_ROUTES) }),
    flags: [
      flag(
        'advertise-address',
        host.address,
        'the address published in the kubernetes Endpoints; must be reachable by the cluster',
      ),
      flag(
        'allow-privileged',
        true,
        'control-plane add-ons such as CNI agents need privileged pods',
      ),
      flag(
        'audit-log-maxage',
        30,
        'delete rotated audit files after 30 days (CIS 1.2.17); only copied in the apiserver, into lumberjack.Logger.MaxAge, which lumberjack reads when it rotates (gopkg.in/natefinch/lumberjack.v2@v2.2.1/lumberjack.go:336, outside the flag map)',
      ),
      flag(
        'audit-log-maxbackup',
        10,
        'keep at most 10 rotated audit files (CIS 1.2.18); only copied in the apiserver, into lumberjack.Logger.MaxBackups, which lumberjack reads when it rotates (lumberjack.go:316, outside the flag map)',
      ),
      flag(
        'audit-log-maxsize',
        100,
        'rotate the audit log at 100 MB, so it never holds more than about 1.1 GB (CIS 1.2.19)',
      ),
      flag(
        'audit-log-path',
        AUDIT_LOG_PATH,
        'who did what through the API, in a file on the host that the apiserver rotates itself (CIS 1.2.16)',
      ),
      flag(
        'audit-policy-file',
        AUDIT_POLICY_PATH,
        'what is logged, rendered by hardwire (components/models/audit-policy.ts): bodies of writes, never of Secrets, tokens or ConfigMaps; without a policy nothing is logged',
      ),
      ...(authn ? [flag('authentication-config', AUTHN_CONFIG_PATH, AUTHN_CONFIG_WHY)] : []),
      flag(
        'authorization-mode',
        'Node,RBAC',
        'Node authorizer for kubelets, RBAC for everyone else',
      ),
      flag(
        'client-ca-file',
        `${PKI}/ca.crt`,
        'client certs signed by the cluster CA authenticate as their CN/O',
      ),
      {
        ...flag(
          'enable-admission-plugins',
          'NodeRestriction',
          'kubelets may only modify their own Node and Pods',
        ),
        // kube-apiserver refuses a plugin in both lists (k8s.io/apiserver@v0.36.3 pkg/server/options/admission.go:206).
        list: { removedBy: 'disable-admission-plugins' },
      },
      flag(
        'enable-aggregator-routing',
        true,
        "call webhook and aggregated-API Services at an endpoint (Pod) address, reached by the workers' pod-CIDR routes, not at the ClusterIP: from the host itself a ClusterIP needs a route to the service range before kube-proxy's DNAT, and lab hosts have none (no default route). Its resolver is the admission webhooks' too (K cmd/kube-apiserver/app/server.go:221, buildServiceResolver at :283); test/webhook-pod.test.ts",
      ),
      flag(
        'encryption-provider-config',
        `${K}/encryption-config.yaml`,
        'Secrets are encrypted in etcd with secretbox (k8s:enc:secretbox:v1:<key>: prefix; a cluster made with aescbc keeps it until hardwire encryption rotate), keys from pki/encryption-config.yaml',
      ),
      flag(
        'etcd-cafile',
        `${PKI}/etcd/ca.crt`,
        "verify etcd's serving cert against the etcd CA (KTHW had no etcd TLS)",
      ),
      flag(
        'etcd-certfile',
        `${PKI}/apiserver-etcd-client.crt`,
        'client cert the apiserver presents to etcd',
      ),
      flag('etcd-keyfile', `${PKI}/apiserver-etcd-client.key`, 'key of the etcd client cert'),
      flag('etcd-servers', etcdServers, 'every etcd member, so the apiserver survives losing one'),
      flag(
        'kubelet-certificate-authority',
        `${PKI}/ca.crt`,
        "verify kubelets' serving certs (logs, exec, port-forward) against the cluster CA; without it any cert is accepted (CIS 1.2.5). hardwire's workers serve with a cert from its table, signed by that CA for the node's name and address (components/registry/kubelet.ts)",
      ),
      flag(
        'kubelet-client-certificate',
        `${PKI}/apiserver-kubelet-client.crt`,
        'a dedicated client cert toward kubelets, separate from the serving cert',
      ),
      flag(
        'kubelet-client-key',
        `${PKI}/apiserver-kubelet-client.key`,
        'key of the kubelet client cert',
      ),
      flag(
        'kubelet-preferred-address-types',
        'InternalIP,ExternalIP,Hostname',
        'reach kubelets by IP first, as kubeadm does',
      ),
      flag(
        'profiling',
        false,
        'no /debug/pprof on the secure port: profiles expose internals and cost CPU on demand (CIS 1.2.15)',
      ),
      flag(
        'proxy-client-cert-file',
        `${PKI}/front-proxy-client.crt`,
        'identity toward aggregated API servers',
      ),
      flag(
        'proxy-client-key-file',
        `${PKI}/front-proxy-client.key`,
        'key of the front-proxy client cert',
      ),
      flag(
        'requestheader-allowed-names',
        'front-proxy-client',
        'only this CN may assert X-Remote-* headers',
      ),
      flag(
        'requestheader-client-ca-file',
        `${PKI}/front-proxy-ca.crt`,
        'front-proxy CA that signs the proxy client cert',
      ),
      flag(
        'requestheader-extra-headers-prefix',
        'X-Remote-Extra-',
        'header prefix for user extras from the front proxy',
      ),
      flag(
        'requestheader-group-headers',
        'X-Remote-Group',
        'header carrying groups from the front proxy',
      ),
      flag(
        'requestheader-username-headers',
        'X-Remote-User',
        'header carrying the user name from the front proxy',
      ),
      flag('secure-port', APISERVER_PORT, 'HTTPS port; the kubeconfigs point here'),
      flag(
        'shutdown-send-retry-after',
        true,
        'on restart, finish in-flight requests and answer new ones 429 Retry-After so clients move to another apiserver; HTTP shutdown then takes 2 s instead of waiting out the 60 s request timeout',
      ),
      flag(
        'shutdown-watch-termination-grace-period',
        '5s',
        'drain open watches within 5 s on shutdown; without it a restart waits 60 s whenever controllers hold watches (measured on the lab: 61 s vs 2 s)',
      ),
      flag(
        'service-account-extend-token-expiration',
        false,
        'a projected service-account token lives as long as was asked (1 h for kubelets), not a year for legacy clients (CIS 1.2.30)',
      ),
      flag('service-account-issuer', issuer, 'iss claim of service-account tokens'),
      flag(
        'service-account-key-file',
        `${PKI}/sa.pub`,
        'public key that verifies service-account tokens',
      ),
      flag(
        'service-account-signing-key-file',
        `${PKI}/sa.key`,
        'private key that signs service-account tokens',
      ),
      flag(
        'service-cluster-ip-range',
        inv.cluster.serviceCIDR,
        'Service IPs; its first IP is the kubernetes Service and is in the serving cert (KTHW omitted this flag)',
      ),
      flag('tls-cert-file', `${PKI}/apiserver.crt`, 'serving cert'),
      flag(
        'tls-cipher-suites',
        CIS_TLS_CIPHERS.join(','),
        "TLS 1.2 clients get only ECDHE with AEAD ciphers, as the kubelet's tlsCipherSuites (CIS 1.2.29 allows these and more); the default is Go's, which for TLS 1.2 also offers ECDHE CBC-SHA suites (TLS 1.3 suites are not configurable)",
      ),
      flag(
        'tls-min-version',
        'VersionTLS12',
        'no TLS 1.0 or 1.1 whatever the Go runtime allows: unset, the minimum is the Go default, which GODEBUG=tls10server=1 lowers to TLS 1.0',
      ),
      flag('tls-private-key-file', `${PKI}/apiserver.key`, 'key of the serving cert'),
    ],
  };
}
