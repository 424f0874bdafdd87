// cluster.extraArgs checked against the components: each flag must be one the component registers at
// this Kubernetes version (the committed flag map), its value must parse as that flag's type, it must
// fit on a systemd ExecStart line, and it may not take over a flag hardwire sets from another field.
import { InputError } from '../../lib/errors.ts';
import { APISERVER_PORT } from '../../lib/constants.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { dataDir, findFlag } from '../flags/map.ts';
import { flagValueProblem } from '../inventory/flag-values.ts';
import { rowOf, type PerComponent } from '../components/registry/index.ts';

/** Flags that print and exit: under systemd the unit would restart forever instead of serving. */
const EXITS = new Set(['help', 'version']);

/**
 * Flags hardwire derives from other inventory fields, or that its kubeconfigs and gates rely on. An
 * extraArgs value for one of them would disagree with the certificates, the other components or the gates.
 */
const DERIVED: PerComponent<Readonly<Record<string, string>>> = {
  etcd: {
    name: 'it is hosts[].name',
    'initial-cluster': 'it lists every etcd host from hosts[]',
    'initial-cluster-token': 'it derives from cluster.name',
    'listen-client-urls':
      'it derives from hosts[].address (the etcd serving certificate holds that address)',
    'advertise-client-urls':
      'it derives from hosts[].address (the etcd serving certificate holds that address)',
    'listen-peer-urls':
      'it derives from hosts[].address (the etcd peer certificate holds that address)',
    'initial-advertise-peer-urls':
      'it derives from hosts[].address (the etcd peer certificate holds that address)',
    'data-dir': "hardwire's snapshots and restores use /var/lib/etcd",
  },
  'kube-vip': {
    address:
      'it is cluster.apiServerVip.address (the serving certificate and every kubeconfig hold it)',
    interface: 'it is cluster.apiServerVip.interface',
    nodeName:
      'it is hosts[].name (the Lease holder the gate compares with the host that has the address)',
    leaseName: "hardwire's gate and drills read that Lease",
  },
  'kube-apiserver': {
    'advertise-address': 'it is hosts[].address (the serving certificate holds that address)',
    'authentication-config':
      'hardwire renders the AuthenticationConfiguration it points at (anonymous requests to the health paths only); set anonymous-auth to decide anonymous auth yourself',
    'oidc-issuer-url':
      'kube-apiserver refuses --oidc-* beside the --authentication-config hardwire passes; an OIDC issuer there is not supported yet',
    'etcd-servers': 'it lists every etcd host from hosts[]',
    'secure-port': `hardwire's kubeconfigs and gates reach kube-apiserver on ${APISERVER_PORT}`,
    'service-cluster-ip-range':
      'set cluster.serviceCIDR instead (the serving certificate holds its first IP)',
  },
  'kube-controller-manager': {
    'cluster-cidr': 'set cluster.podCIDR instead',
    'cluster-name': 'set cluster.name instead',
    'service-cluster-ip-range': "set cluster.serviceCIDR instead (it must match kube-apiserver's)",
  },
  kubelet: {
    'node-ip': 'it is hosts[].address (the kubelet serving certificate holds that address)',
    'hostname-override': "it is hosts[].name (the node's certificates are for system:node:<name>)",
    kubeconfig: "it is the node's own identity from the certificate table",
    config: 'hardwire renders the KubeletConfiguration it points at',
  },
  'kube-proxy': {
    config: 'hardwire renders the KubeProxyConfiguration it points at',
  },
  'kube-scheduler': {},
  containerd: {},
  registry: {},
};

// Control characters and backslashes: render/systemd.ts's systemdWord cannot carry them on ExecStart.
// eslint-disable-next-line no-control-regex
const UNIT_UNSAFE = /[\x00-\x1f\x7f\\]/;

/** Whether the committed flag map covers this component at this version (a component added since has none yet). */
function hasFlagMap(component: string, version: string): boolean {
  return existsSync(join(dataDir(version), `${component}.json`));
}

export function checkExtraArgs(
  extraArgs: Record<string, Record<string, string> | undefined>,
  kubernetesVersion: string,
): void {
  for (const [component, flags] of Object.entries(extraArgs)) {
    const mapped = hasFlagMap(component, kubernetesVersion);
    for (const [flag, value] of Object.entries(flags ?? {})) {
      const field = `cluster.extraArgs.${component}.${flag}`;
      const derived = rowOf(DERIVED, component)?.[flag];
      if (derived)
        throw new InputError(
          field,
          `hardwire sets --${flag} itself: ${derived}; remove it from extraArgs`,
        );
      if (EXITS.has(flag))
        throw new InputError(
          field,
          `--${flag} makes ${component} print and exit instead of running; remove it from extraArgs`,
        );
      if (UNIT_UNSAFE.test(value))
        throw new InputError(
          field,
          `${JSON.stringify(value)} contains a newline, control character or backslash, which a systemd unit's ExecStart cannot carry safely`,
        );
      if (!mapped) continue;
      const entry = findFlag(component, flag, kubernetesVersion);
      // Same wording as render/citations.ts, which checks the rendered units once more.
      if (!entry)
        throw new InputError(
          field,
          `${component} (Kubernetes ${kubernetesVersion}) registers no flag --${flag}; see "hardwire flags ${component}"`,
        );
      const problem = flagValueProblem(entry.type, value);
      if (problem) throw new InputError(field, `${problem}; ${component} would refuse it at start`);
    }
  }
}
