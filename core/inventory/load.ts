// Reads an inventory file into a resolved, validated Inventory. Any problem is one InputError line.
import { readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { InputError } from '../../lib/errors.ts';
import { cidrContains, cidrsOverlap, firstServiceIp, type Cidr } from '../../lib/net.ts';
import { expandHome } from '../../lib/paths.ts';
import { inventorySchema, type AddonName, type HostDoc, type InventoryDoc } from './schema.ts';
import { APISERVER_PORT } from '../../lib/constants.ts';
import {
  checkCertValidity,
  checkDnsDomain,
  checkHostAddress,
  checkPodCidr,
  checkSan,
  checkServiceCidr,
  checkSshAddress,
  checkAddons,
  nodeMask,
  parseEndpoint,
} from './rules.ts';
import { podCidrsFor } from './pod-cidrs.ts';

const MAX_BYTES = 1024 * 1024;

export interface Host extends HostDoc {
  isEtcd: boolean;
  isControlPlane: boolean;
  isWorker: boolean;
  /** Holds cluster.apiServerVip in turn with the other control-plane hosts: runs kube-vip. */
  isVip: boolean;
  /**
   * Runs the lab's image registry (components/registry/registry.ts): the first control-plane host,
   * when the cluster has workers to pull from it.
   */
  isRegistry: boolean;
  /** A worker's pod range (inventory/pod-cidrs.ts); undefined on other hosts. */
  podCidr?: Cidr;
}

export interface Inventory {
  file: string;
  doc: InventoryDoc;
  cluster: InventoryDoc['cluster'];
  hosts: Host[];
  etcdHosts: Host[];
  controlPlaneHosts: Host[];
  workerHosts: Host[];
  serviceCidr: Cidr;
  podCidr: Cidr;
  /** The `kubernetes` Service IP: first address of serviceCIDR. */
  serviceIp: string;
  endpoint: { host: string; port: number };
  /** Several control-plane hosts, and every client reaches the first: wire says so (issue 41). */
  endpointWarning?: string;
  knownHostsFile: string | undefined;
  warnings: string[];
  /** cluster.addons, checked (inventory/rules.ts checkAddons): applied by wire's addons phase. */
  addons: readonly AddonName[];
}

function formatPath(path: PropertyKey[]): string {
  return path.reduce<string>(
    (acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${String(p)}` : String(p)),
    '',
  );
}

/** Valid keys at a path, read from the schema itself so the hint never drifts. */
function keysAt(path: PropertyKey[]): string[] {
  let node: z.ZodType = inventorySchema;
  for (const p of path) {
    while (node instanceof z.ZodDefault || node instanceof z.ZodOptional)
      node = node.unwrap() as z.ZodType;
    if (node instanceof z.ZodArray) node = node.element as z.ZodType;
    if (typeof p === 'number') continue;
    if (!(node instanceof z.ZodObject)) return [];
    node = (node.shape as Record<string, z.ZodType>)[String(p)]!;
  }
  while (node instanceof z.ZodDefault || node instanceof z.ZodOptional)
    node = node.unwrap() as z.ZodType;
  if (node instanceof z.ZodArray) node = node.element as z.ZodType;
  return node instanceof z.ZodObject ? Object.keys(node.shape) : [];
}

function issueToError(issue: z.core.$ZodIssue): InputError {
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    return new InputError(
      formatPath([...issue.path, key]),
      `unknown key; valid keys here are ${keysAt(issue.path).join(', ')}`,
    );
  }
  const field = formatPath(issue.path) || '(document)';
  if (issue.code === 'invalid_key')
    return new InputError(
      field,
      'is not a flag name; write it without leading dashes, such as v or audit-log-path',
    );
  if (issue.code === 'invalid_type') {
    return new InputError(
      field,
      `expected ${issue.expected}${issue.input === undefined ? ' (it is missing)' : `, got ${Array.isArray(issue.input) ? 'array' : issue.input === null ? 'null' : typeof issue.input}`}`,
    );
  }
  return new InputError(field, issue.message);
}

export function parseInventory(text: string, file = '<inline>'): Inventory {
  if (text.trim() === '')
    throw new InputError(file, 'inventory is empty; start from hosts/example.yaml');
  const parsed = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (parsed.errors.length > 0) {
    const e = parsed.errors[0]!;
    const line = e.linePos?.[0]?.line;
    throw new InputError(
      `${file}${line ? `:${line}` : ''}`,
      `YAML syntax: ${(e.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')}`,
    );
  }
  let raw: unknown;
  try {
    raw = parsed.toJS();
  } catch (err) {
    // The parser's alias limit (maxAliasCount) throws here, on a document that expands past it.
    throw new InputError(
      file,
      `YAML: ${(err as Error).message.split('\n')[0]}; write the values out instead of through nested aliases`,
    );
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new InputError(
      '(document)',
      'expected a mapping with apiVersion, kind, cluster and hosts',
    );
  }
  const result = inventorySchema.safeParse(raw, { reportInput: true });
  if (!result.success) {
    // A typo'd key also shows up as a missing one; name the typo, it is the actual mistake.
    const issues = result.error.issues;
    throw issueToError(issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0]!);
  }
  return resolveInventory(result.data, file);
}

export function resolveInventory(doc: InventoryDoc, file: string): Inventory {
  const c = doc.cluster;
  // Each value against the component that consumes it (inventory/rules.ts, inventory/extra-args.ts).
  const serviceCidr = checkServiceCidr(c.serviceCIDR);
  const podCidr = checkPodCidr(c.podCIDR, c.extraArgs);
  if (cidrsOverlap(serviceCidr, podCidr)) {
    throw new InputError(
      'cluster.podCIDR',
      `${c.podCIDR} overlaps cluster.serviceCIDR ${c.serviceCIDR}; pick disjoint ranges`,
    );
  }
  checkDnsDomain(c.dnsDomain);
  c.extraSANs.forEach((san, i) => checkSan(`cluster.extraSANs[${i}]`, san));
  checkCertValidity(c.certValidity);
  const addons = checkAddons(c.addons, doc.hosts.filter((h) => h.roles.includes('worker')).length);

  const names = new Map<string, number>();
  const addrs = new Map<string, number>();
  doc.hosts.forEach((h, i) => {
    const n = names.get(h.name);
    if (n !== undefined)
      throw new InputError(
        `hosts[${i}].name`,
        `"${h.name}" duplicates hosts[${n}].name; host names must be unique`,
      );
    names.set(h.name, i);
    const a = addrs.get(h.address);
    if (a !== undefined)
      throw new InputError(
        `hosts[${i}].address`,
        `${h.address} duplicates hosts[${a}].address; addresses must be unique`,
      );
    addrs.set(h.address, i);
    checkHostAddress(`hosts[${i}].address`, h.address);
    if (h.ssh.address !== undefined) checkSshAddress(`hosts[${i}].ssh.address`, h.ssh.address);
    if (new Set(h.roles).size !== h.roles.length)
      throw new InputError(`hosts[${i}].roles`, 'lists a role twice');
    for (const cidr of [serviceCidr, podCidr]) {
      if (cidrContains(cidr, h.address))
        throw new InputError(
          `hosts[${i}].address`,
          `${h.address} lies inside ${cidr.text}; host addresses must be outside the service and pod CIDRs`,
        );
    }
  });

  const podCidrs = podCidrsFor(doc.hosts, podCidr, nodeMask(c.extraArgs));
  const anyWorker = doc.hosts.some((h) => h.roles.includes('worker'));
  const registryHost = doc.hosts.find((h) => h.roles.includes('control-plane'))?.name;
  const hosts: Host[] = doc.hosts.map((h) => {
    const worker = h.roles.includes('worker');
    const pod = podCidrs.get(h.name);
    return {
      ...h,
      isEtcd: h.roles.includes('etcd'),
      isControlPlane: h.roles.includes('control-plane'),
      isWorker: worker,
      isVip: c.apiServerVip !== undefined && h.roles.includes('control-plane'),
      isRegistry: anyWorker && h.name === registryHost,
      ...(pod ? { podCidr: pod } : {}),
    };
  });
  const etcdHosts = hosts.filter((h) => h.isEtcd);
  const controlPlaneHosts = hosts.filter((h) => h.isControlPlane);
  if (controlPlaneHosts.length === 0)
    throw new InputError(
      'hosts[].roles',
      'no host has the control-plane role; give at least one host "control-plane"',
    );
  if (etcdHosts.length === 0)
    throw new InputError(
      'hosts[].roles',
      'no host has the etcd role; give at least one host "etcd"',
    );

  const warnings: string[] = [];
  if (etcdHosts.length % 2 === 0) {
    warnings.push(
      `hosts: ${etcdHosts.length} etcd members tolerate no more failures than ${etcdHosts.length - 1}; use an odd number for quorum`,
    );
  }

  const vip = c.apiServerVip;
  if (vip) checkVip(vip.address, doc.hosts, [serviceCidr, podCidr], c.apiServerEndpoint);
  const endpointWarning =
    !vip && controlPlaneHosts.length > 1 && c.apiServerEndpoint === ''
      ? `cluster.apiServerVip: not set, so every kubelet, kube-proxy and admin.conf reaches the API through ${controlPlaneHosts[0]!.name} alone; set apiServerVip (a free address on the control-plane hosts' network) or apiServerEndpoint (a load balancer)`
      : undefined;
  const endpoint = parseEndpoint(
    c.apiServerEndpoint,
    vip?.address ?? controlPlaneHosts[0]!.address,
    APISERVER_PORT,
  );
  const base = dirname(resolve(file));
  return {
    file: resolve(file),
    doc,
    cluster: c,
    hosts,
    etcdHosts,
    controlPlaneHosts,
    workerHosts: hosts.filter((h) => h.isWorker),
    serviceCidr,
    podCidr,
    serviceIp: firstServiceIp(serviceCidr),
    endpoint,
    ...(endpointWarning ? { endpointWarning } : {}),
    knownHostsFile: doc.knownHosts ? resolve(base, expandHome(doc.knownHosts)) : undefined,
    warnings,
    addons,
  };
}

/** The VIP is an address of no host, outside the cluster's ranges, and it is the endpoint. */
function checkVip(
  address: string,
  hosts: readonly { address: string }[],
  cidrs: readonly Cidr[],
  endpoint: string,
): void {
  const field = 'cluster.apiServerVip.address';
  if (isIP(address) !== 4)
    throw new InputError(field, `"${address}" must be an IPv4 address such as 198.51.100.10`);
  checkHostAddress(field, address);
  const i = hosts.findIndex((h) => h.address === address);
  if (i >= 0)
    throw new InputError(
      field,
      `${address} is hosts[${i}].address; the VIP must be a free address on the control-plane hosts' network`,
    );
  for (const cidr of cidrs)
    if (cidrContains(cidr, address))
      throw new InputError(field, `${address} lies inside ${cidr.text}; use an address outside it`);
  if (endpoint !== '')
    throw new InputError(
      'cluster.apiServerEndpoint',
      'is set beside apiServerVip; the VIP is the endpoint, so remove one of them',
    );
}

export function loadInventory(file: string): Inventory {
  let text: string;
  try {
    const st = statSync(file);
    if (!st.isFile())
      throw new InputError(file, 'is not a regular file; pass --inventory with a YAML file');
    if (st.size > MAX_BYTES)
      throw new InputError(file, `is ${st.size} bytes; an inventory must be under 1 MiB`);
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof InputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(
      '--inventory',
      `cannot read ${file} (${code ?? 'error'}); check the path and its permissions`,
    );
  }
  return parseInventory(text, file);
}
