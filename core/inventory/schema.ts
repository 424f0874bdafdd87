// The inventory contract (hardwire/v1). Field names are public API: keep them.
import { z } from 'zod';
import { isIP } from 'node:net';
import { PINNED_KUBERNETES } from '../../lib/constants.ts';

export { PINNED_KUBERNETES };

const dnsLabel = z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, {
  message: 'must be a DNS label: lowercase letters, digits and "-", at most 63 characters',
});

const flagName = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, {
  message: 'must be a flag name without dashes in front, such as "v" or "audit-log-path"',
});

const ssh = z.strictObject({
  user: z.string().min(1).default('root'),
  port: z.number().int().min(1).max(65535).default(22),
  identityFile: z.string().min(1).default('~/.ssh/id_ed25519'),
  proxyJump: z.string().default(''),
  become: z.enum(['', 'sudo']).default(''),
  /**
   * Where SSH dials the host, when that is not its cluster address (a cloud VM's public address beside
   * its private one): an IPv4 address or a DNS name, checked by inventory/rules.ts checkSshAddress.
   * Certificates, flags and routes keep hosts[].address.
   */
  address: z.string().optional(),
});

const host = z.strictObject({
  name: dnsLabel,
  address: z
    .string()
    .refine((s) => isIP(s) === 4, { message: 'must be an IPv4 address such as 198.51.100.10' }),
  roles: z
    .array(z.enum(['etcd', 'control-plane', 'worker']))
    .min(1)
    .default(['etcd', 'control-plane']),
  /** A worker's own pod range; default: the next node range of cluster.podCIDR, in host order (inventory/pod-cidrs.ts). */
  podCIDR: z.string().optional(),
  ssh: ssh.default(ssh.parse({})),
});

/**
 * kubeadm's EncryptionAlgorithmType values, spelled as it spells them (cmd/kubeadm/app/apis/kubeadm/types.go:741-750
 * at v1.36.3); RSA-2048 is its default too (apis/kubeadm/v1beta4/defaults.go:61). docs/pki.md says why.
 */
export const KEY_ALGORITHMS = [
  'RSA-2048',
  'RSA-3072',
  'RSA-4096',
  'ECDSA-P256',
  'ECDSA-P384',
] as const;
export type KeyAlgorithm = (typeof KEY_ALGORITHMS)[number];

/**
 * The opt-in cluster addons (core/addons/<name>.ts), built here and served by the lab registry under
 * their upstream image names; applied by wire's addons phase, each with its gate (docs/addons.md).
 */
export const ADDON_NAMES = ['metrics-server'] as const;
export type AddonName = (typeof ADDON_NAMES)[number];

const cluster = z.strictObject({
  name: dnsLabel,
  kubernetesVersion: z
    .string()
    .regex(/^v1\.\d+\.\d+$/, { message: 'must look like v1.36.3' })
    .default(PINNED_KUBERNETES),
  serviceCIDR: z.string().default('10.96.0.0/12'),
  podCIDR: z.string().default('10.244.0.0/16'),
  dnsDomain: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, {
      message: 'must be a DNS domain such as cluster.local',
    })
    .default('cluster.local'),
  apiServerEndpoint: z.string().default(''),
  /**
   * A free address on the control-plane hosts' network that kube-vip holds on one of them at a time
   * (registry/kube-vip.ts): the cluster endpoint every kubelet, kube-proxy and admin.conf reaches.
   */
  apiServerVip: z
    .strictObject({
      address: z.string(),
      /** The network interface, the same name on every control-plane host, that the address is added to. */
      interface: z.string().regex(/^[A-Za-z0-9_.-]{1,15}$/, {
        message: 'must be a network interface name such as eth0 (at most 15 characters)',
      }),
    })
    .optional(),
  extraSANs: z.array(z.string().min(1)).default([]),
  /**
   * Extra or overriding flags per component, as kubeadm's extraArgs: `{kube-apiserver: {v: "2"}}`.
   * The component names, flags and values are checked by validate/inventory.ts, against the registry and the flag map.
   */
  extraArgs: z.record(z.string(), z.record(flagName, z.string())).default({}),
  /**
   * extraArgs overrides that may weaken a protection hardwire sets (a CIS check they fail), as
   * `<component>.<flag>`; without an entry such an override is refused (validate/weakening.ts).
   */
  allowWeaker: z
    .array(
      z.string().regex(/^[a-z0-9-]+\.[a-z0-9][a-z0-9-]*$/, {
        message: 'must be <component>.<flag>, such as kube-apiserver.anonymous-auth',
      }),
    )
    .default([]),
  /** Every key hardwire generates: CAs, leaves, the service-account key. Fixed once a CA exists (pki/store.ts). */
  keyAlgorithm: z.enum(KEY_ALGORITHMS).default('RSA-2048'),
  /** Opt-in addons beside CoreDNS, on a cluster with workers (inventory/rules.ts checkAddons). */
  addons: z.array(z.string()).default([]),
  certValidity: z
    .strictObject({
      leafDays: z.number().int().min(1).max(3650).default(365),
      caDays: z.number().int().min(1).max(36500).default(3650),
    })
    .default({ leafDays: 365, caDays: 3650 }),
});

export const inventorySchema = z.strictObject({
  apiVersion: z.literal('hardwire/v1', { message: 'must be "hardwire/v1"' }),
  kind: z.literal('Inventory', { message: 'must be "Inventory"' }),
  cluster,
  hosts: z.array(host).min(1, { message: 'needs at least one host' }),
  /** known_hosts file for host-key pinning, relative to the inventory file. */
  knownHosts: z.string().optional(),
  /** Use component binaries from this local directory instead of the cache. */
  components: z.strictObject({ from: z.string().min(1) }).optional(),
});

export type InventoryInput = z.input<typeof inventorySchema>;
export type InventoryDoc = z.output<typeof inventorySchema>;
export type HostDoc = InventoryDoc['hosts'][number];
