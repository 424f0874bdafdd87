// Each inventory value checked against the rule of the component that consumes it, so that an
// inventory that loads never fails later on a host for a reason it already held. Sources are cited
// at the pinned versions, in the Go module cache (go env GOMODCACHE; hardwire's is ~/.cache/hardwire/gomod):
//   K  = k8s.io/kubernetes@v1.36.3
//   KA = K/cmd/kubeadm/app/apis/kubeadm/validation/validation.go (kubeadm v1.36.3; `hardwire compare`
//        runs real kubeadm with this inventory's service CIDR, pod CIDR, DNS domain and SANs)
import { isIP } from 'node:net';
import { InputError } from '../../lib/errors.ts';
import { cidrContains, parseCidr, type Cidr } from '../../lib/net.ts';
import { flagValueProblem } from './flag-values.ts';
import { ADDON_NAMES, type AddonName } from './schema.ts';

type ExtraArgs = Record<string, Record<string, string> | undefined>;

/** A flag value from extraArgs, if set. */
function extraArg(extraArgs: ExtraArgs, component: string, flag: string): string | undefined {
  return extraArgs[component]?.[flag];
}

/**
 * Service CIDR, /12 to /28:
 * - at least 8 addresses for kube-apiserver: K/pkg/controlplane/apiserver/options/options.go:373-375
 *   ("the service cluster IP range must be at least 8 IP addresses"), and at least 10 for kubeadm
 *   (KA:455 with K/cmd/kubeadm/app/constants/constants.go:254 MinimumAddressesInServiceSubnet = 10);
 * - at most a /12: kubeadm KA:479 (constants.go:260 MaximumBitsForServiceSubnet = 20). kube-apiserver
 *   v1.36.3 has the same rule at K/cmd/kube-apiserver/app/options/validation.go:86-95, but runs it only
 *   when MultiCIDRServiceAllocator or DisableAllocatorDualWrite is off (validation.go:52-57); both are
 *   GA and locked on in v1.36.3 (K/pkg/features/kube_features.go:1428, 1685). Older apiservers and
 *   kubeadm still refuse larger ranges, so hardwire keeps the /12 limit.
 */
export function checkServiceCidr(text: string): Cidr {
  const c = parseCidr(text);
  if (!c)
    throw new InputError(
      'cluster.serviceCIDR',
      `"${text}" is not an IPv4 network CIDR such as 10.96.0.0/12`,
    );
  if (c.bits < 12)
    throw new InputError(
      'cluster.serviceCIDR',
      `/${c.bits} is too large; kubeadm (and kube-apiserver before the IPAddress allocator) allow at most a /12`,
    );
  if (c.bits > 28)
    throw new InputError(
      'cluster.serviceCIDR',
      `/${c.bits} is too small; kube-apiserver needs at least 8 service IPs and kubeadm at least 10, so use a /28 or larger`,
    );
  return c;
}

/**
 * Pod CIDR, when kube-controller-manager hands each Node a range of it (--allocate-node-cidrs, which
 * hardwire sets): the node mask is --node-cidr-mask-size (or -ipv4, not both: K/cmd/kube-controller-manager/app/core.go:979-982),
 * default /24 (core.go:76). The pod CIDR's prefix may not be longer than the node mask
 * (K/pkg/controller/nodeipam/node_ipam_controller.go:89-90, the controller does not start), nor more
 * than 16 bits shorter (kubeadm KA:504-507, constants.go:269 PodSubnetNodeMaskMaxDiff). At least 14
 * addresses in any case (KA:455 with constants.go:264 MinimumAddressesInPodSubnet).
 */
export function checkPodCidr(text: string, extraArgs: ExtraArgs): Cidr {
  const c = parseCidr(text);
  if (!c)
    throw new InputError(
      'cluster.podCIDR',
      `"${text}" is not an IPv4 network CIDR such as 10.244.0.0/16`,
    );
  if (c.bits > 28)
    throw new InputError(
      'cluster.podCIDR',
      `/${c.bits} is too small; kubeadm needs at least 14 pod addresses, so use a /28 or larger`,
    );
  const kcm = 'kube-controller-manager';
  const allocate = extraArg(extraArgs, kcm, 'allocate-node-cidrs');
  if (allocate !== undefined && ['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(allocate))
    return c;
  const both =
    extraArg(extraArgs, kcm, 'node-cidr-mask-size') !== undefined &&
    extraArg(extraArgs, kcm, 'node-cidr-mask-size-ipv4') !== undefined;
  if (both)
    throw new InputError(
      `cluster.extraArgs.${kcm}.node-cidr-mask-size-ipv4`,
      'kube-controller-manager refuses --node-cidr-mask-size-ipv4 together with --node-cidr-mask-size; keep one',
    );
  const flag =
    extraArg(extraArgs, kcm, 'node-cidr-mask-size') !== undefined
      ? 'node-cidr-mask-size'
      : 'node-cidr-mask-size-ipv4';
  const set = extraArg(extraArgs, kcm, flag);
  if (
    set !== undefined &&
    (flagValueProblem('int32', set) || !/^\d+$/.test(set) || Number(set) < 1 || Number(set) > 32)
  ) {
    throw new InputError(
      `cluster.extraArgs.${kcm}.${flag}`,
      `"${set}" is not an IPv4 prefix length from 1 to 32`,
    );
  }
  const mask = nodeMask(extraArgs);
  const where =
    set === undefined ? 'the default node range (/24)' : `--${flag}=${mask} in cluster.extraArgs`;
  if (c.bits > mask)
    throw new InputError(
      'cluster.podCIDR',
      `/${c.bits} is smaller than one node's pod range, ${where}; kube-controller-manager's node IPAM would not start; use a /${mask} or larger`,
    );
  if (mask - c.bits > 16)
    throw new InputError(
      'cluster.podCIDR',
      `/${c.bits} is more than 16 bits wider than ${where}; kubeadm refuses that; use a /${mask - 16} or smaller`,
    );
  return c;
}

/**
 * One node's pod range: --node-cidr-mask-size(-ipv4) from extraArgs, default /24 (core.go:76). The
 * same size for the ranges hardwire hands workers (pod-cidrs.ts). Checked by checkPodCidr first.
 */
export function nodeMask(extraArgs: ExtraArgs): number {
  const kcm = 'kube-controller-manager';
  const set =
    extraArg(extraArgs, kcm, 'node-cidr-mask-size') ??
    extraArg(extraArgs, kcm, 'node-cidr-mask-size-ipv4');
  return set === undefined || !/^\d+$/.test(set) ? 24 : Number(set);
}

/** RFC 1123 subdomain as Kubernetes checks it (K8s apimachinery IsDNS1123Subdomain), plus RFC 1035's 63-character labels. */
function dnsSubdomainProblem(name: string): string | undefined {
  if (name.length > 253) return 'is longer than 253 characters';
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name)) {
    return 'is not a DNS name: lowercase letters, digits, "-" and "." only, each label starting and ending with a letter or digit';
  }
  if (name.split('.').some((l) => l.length > 63)) return 'has a label longer than 63 characters';
  return undefined;
}

/**
 * dnsDomain: a DNS subdomain (kubeadm KA:561-563). It also ends up in the serving certificate as
 * kubernetes.default.svc.<domain>, which must itself be a valid name.
 */
export function checkDnsDomain(domain: string): void {
  const problem =
    dnsSubdomainProblem(domain) ?? dnsSubdomainProblem(`kubernetes.default.svc.${domain}`);
  if (problem)
    throw new InputError(
      'cluster.dnsDomain',
      `"${domain}" ${problem.replace('is longer than 253', 'makes kubernetes.default.svc.<domain> longer than 253')}; use a name such as cluster.local`,
    );
}

/** Something that looks like a dotted quad is an IP to hardwire's certificate table (pki/table.ts isIp), so it must be a real one. */
function looksLikeIpv4(s: string): boolean {
  return /^\d+(\.\d+){3}$/.test(s);
}

/** A certificate SAN: an IP, a DNS subdomain, or a wildcard one, as kubeadm's ValidateCertSANs (KA:371-383). */
export function checkSan(field: string, san: string): void {
  if (isIP(san) !== 0) return;
  if (looksLikeIpv4(san)) throw new InputError(field, `"${san}" is not a valid IPv4 address`);
  const problem = dnsSubdomainProblem(san.startsWith('*.') ? san.slice(2) : san);
  if (problem)
    throw new InputError(
      field,
      `"${san}" ${problem}; a SAN is an IP address, a DNS name or *.<DNS name>`,
    );
}

/**
 * apiServerEndpoint, host[:port]: the host is an IPv4 address or a DNS subdomain, the port 1-65535, as
 * kubeadm's ParseHostPort (K/cmd/kubeadm/app/util/endpoint.go:95-111, 116-122). The host goes into
 * the serving certificate and the kubeconfigs' https://host:port.
 */
export function parseEndpoint(
  text: string,
  fallbackHost: string,
  defaultPort: number,
): { host: string; port: number } {
  const field = 'cluster.apiServerEndpoint';
  if (text === '') return { host: fallbackHost, port: defaultPort };
  const m = /^([^:]+)(?::(\d{1,5}))?$/.exec(text);
  const port = m?.[2] === undefined ? defaultPort : Number(m[2]);
  if (!m || port < 1 || port > 65535)
    throw new InputError(
      field,
      `"${text}" is not host[:port] with a port from 1 to 65535; use for example cp.example.com:6443`,
    );
  const host = m[1]!;
  if (isIP(host) === 4) return { host, port };
  if (looksLikeIpv4(host)) throw new InputError(field, `"${host}" is not a valid IPv4 address`);
  const problem = dnsSubdomainProblem(host);
  if (problem)
    throw new InputError(
      field,
      `host "${host}" ${problem}; use an IPv4 address or a DNS name such as cp.example.com`,
    );
  return { host, port };
}

/**
 * Addresses a host cannot have. kube-apiserver publishes each control-plane address in the kubernetes
 * Service's endpoints, which refuse unspecified, loopback, link-local and link-local multicast
 * addresses (K/pkg/apis/core/validation/validation.go:8409, 8423-8442). etcd binds its peer and
 * client URLs to the address, which no multicast or reserved (240/4, broadcast) address allows.
 */
const NOT_A_HOST: [Cidr, string][] = (
  [
    ['0.0.0.0/8', 'unspecified ("this network")'],
    ['127.0.0.0/8', 'loopback'],
    ['169.254.0.0/16', 'link-local'],
    ['224.0.0.0/4', 'multicast'],
    ['240.0.0.0/4', 'reserved or broadcast'],
  ] as const
).map(([c, what]) => [parseCidr(c)!, what]);

export function checkHostAddress(field: string, address: string): void {
  const hit = NOT_A_HOST.find(([c]) => cidrContains(c, address));
  if (hit)
    throw new InputError(
      field,
      `${address} is a ${hit[1]} address (${hit[0].text}); use the address other hosts reach this one on`,
    );
}

/**
 * ssh.address: only this machine dials it, so no component's rule applies and loopback is fine (a
 * forwarded port). An IPv4 address or a DNS name, so it can never read as an ssh option ("-o...").
 */
export function checkSshAddress(field: string, address: string): void {
  if (isIP(address) === 4) return;
  const fix = 'use an IPv4 address or a DNS name such as node1.example.com';
  if (isIP(address) === 6) throw new InputError(field, `"${address}" is an IPv6 address; ${fix}`);
  if (looksLikeIpv4(address))
    throw new InputError(field, `"${address}" is not a valid IPv4 address; ${fix}`);
  const problem = dnsSubdomainProblem(address);
  if (problem) throw new InputError(field, `"${address}" ${problem}; ${fix}`);
}

/**
 * Leaves may not outlive their CA. kubeadm warns about the same (KA:78-80 with 806-811,
 * certificateValidityPeriod vs caCertificateValidityPeriod); hardwire refuses it, because such a leaf's
 * NotAfter is a date it never reaches and `certs check` would report it. The bounds of each (1-3650 and
 * 1-36500 days) are in schema.ts; node-forge writes GeneralizedTime past 2049, so both fit X.509.
 */
export function checkCertValidity(v: { leafDays: number; caDays: number }): void {
  if (v.leafDays > v.caDays) {
    throw new InputError(
      'cluster.certValidity.leafDays',
      `${v.leafDays} days is longer than caDays (${v.caDays}); a leaf stops working when its CA expires, so keep leafDays at or below caDays`,
    );
  }
}

/**
 * cluster.addons: known names, each once, and only where a worker runs their Pods. cert-manager is
 * named apart: its three binaries' main packages are nested modules the Go module proxy does not
 * serve (docs/addons.md), so it cannot be built here yet.
 */
export function checkAddons(addons: readonly string[], workers: number): AddonName[] {
  const seen = new Set<string>();
  addons.forEach((a, i) => {
    const field = `cluster.addons[${i}]`;
    if (a === 'cert-manager')
      throw new InputError(
        field,
        `cert-manager cannot be built here yet (its cmd/controller, cmd/webhook and cmd/cainjector modules are not served by the Go module proxy; docs/addons.md); remove it, valid addons are ${ADDON_NAMES.join(', ')}`,
      );
    if (!(ADDON_NAMES as readonly string[]).includes(a))
      throw new InputError(
        field,
        `unknown addon "${a}"; valid addons are ${ADDON_NAMES.join(', ')}`,
      );
    if (seen.has(a)) throw new InputError(field, `"${a}" is listed twice; list each addon once`);
    seen.add(a);
  });
  if (addons.length > 0 && workers === 0)
    throw new InputError(
      'cluster.addons',
      `${addons.join(', ')} run as Pods and no host has the worker role; give a host "worker" or remove cluster.addons`,
    );
  return addons as AddonName[];
}
