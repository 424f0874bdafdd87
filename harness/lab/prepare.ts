// Per-host identity written into each host's overlay upper dir before boot, and the lab's client-side
// trust files (SSH key, known_hosts, inventory). Only touch an upper dir while its host is powered off.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import type { InventoryInput } from '../../core/inventory/schema.ts';
import { generateEd25519, isWellFormedEd25519Public } from '../../core/transport/keygen.ts';
import { formatKnownHost } from '../../core/transport/known-hosts.ts';
import type { LabFiles, LabHostState, LabState } from './state.ts';
import { proxyJumpOf } from './inner.ts';

function write(path: string, data: string, mode: number): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, data, { mode });
  chmodSync(path, mode); // writeFileSync's mode only applies when it creates the file
}

/** The lab's client key (ed25519, 0600). Returns the public key line. */
export function ensureLabKey(files: LabFiles, labName: string): string {
  if (!existsSync(files.key) || !existsSync(`${files.key}.pub`)) {
    const pair = generateEd25519(`hardwire-lab-${labName}`);
    write(files.key, pair.private, 0o600);
    write(`${files.key}.pub`, `${pair.public}\n`, 0o644);
  }
  chmodSync(files.key, 0o600);
  return readFileSync(`${files.key}.pub`, 'utf8').trim();
}

function etcHosts(state: LabState): string {
  return [
    '127.0.0.1\tlocalhost',
    '::1\tlocalhost ip6-localhost ip6-loopback',
    ...state.hosts.map((h) => `${h.address}\t${h.name}`),
    '',
  ].join('\n');
}

/** A non-root login with passwordless sudo, for inventories with `become: sudo` (created at boot by systemd-sysusers). */
export const LAB_SUDO_USER = 'hardwire';

const SSHD_CONF = [
  '# hardwire lab: one per-host key, key-only root login; the lab key also logs in as the sudo user.',
  'HostKey /etc/ssh/ssh_host_ed25519_key',
  // Root-owned and world-readable, so sshd reads it for a user whose home holds no .ssh.
  'AuthorizedKeysFile .ssh/authorized_keys /etc/ssh/authorized_keys/%u',
  'PermitRootLogin prohibit-password',
  'PasswordAuthentication no',
  'KbdInteractiveAuthentication no',
  'UseDNS no',
  '',
].join('\n');

/** Writes hostname, /etc/hosts, authorized key, and (first time only) machine-id and sshd host key. */
export function prepareUpper(state: LabState, host: LabHostState, labPubKey: string): void {
  const up = host.upper;
  mkdirSync(up, { recursive: true, mode: 0o755 });
  write(join(up, 'etc', 'hostname'), `${host.name}\n`, 0o644);
  write(join(up, 'etc', 'hosts'), etcHosts(state), 0o644);
  write(join(up, 'etc', 'ssh', 'sshd_config.d', 'hardwire.conf'), SSHD_CONF, 0o644);
  mkdirSync(join(up, 'root', '.ssh'), { recursive: true, mode: 0o700 });
  chmodSync(join(up, 'root', '.ssh'), 0o700);
  write(join(up, 'root', '.ssh', 'authorized_keys'), `${labPubKey}\n`, 0o600);
  write(
    join(up, 'etc', 'sysusers.d', 'hardwire-lab.conf'),
    `u ${LAB_SUDO_USER} - "hardwire lab login, for become sudo" /home/${LAB_SUDO_USER} /bin/sh\n`,
    0o644,
  );
  write(
    join(up, 'etc', 'sudoers.d', 'hardwire-lab'),
    `${LAB_SUDO_USER} ALL=(ALL) NOPASSWD: ALL\n`,
    0o440,
  );
  write(join(up, 'etc', 'ssh', 'authorized_keys', LAB_SUDO_USER), `${labPubKey}\n`, 0o644);
  const machineId = join(up, 'etc', 'machine-id');
  if (!existsSync(machineId)) write(machineId, `${randomBytes(16).toString('hex')}\n`, 0o444);
  const hostKey = join(up, 'etc', 'ssh', 'ssh_host_ed25519_key');
  // A malformed key (made by an older hardwire with ssh2's generator) keeps sshd down: replace it.
  const usable =
    existsSync(hostKey) &&
    existsSync(`${hostKey}.pub`) &&
    isWellFormedEd25519Public(readFileSync(`${hostKey}.pub`, 'utf8'));
  if (!usable) {
    const pair = generateEd25519(`root@${host.name}`);
    write(hostKey, pair.private, 0o600);
    write(`${hostKey}.pub`, `${pair.public}\n`, 0o644);
  }
}

/** The host's public key blob, read from its upper dir. */
export function hostKeyBlob(host: LabHostState): Buffer {
  const line = readFileSync(
    join(host.upper, 'etc', 'ssh', 'ssh_host_ed25519_key.pub'),
    'utf8',
  ).trim();
  return Buffer.from(line.split(/\s+/)[1] ?? '', 'base64');
}

/** known_hosts pinning each host's key under its name and its address. */
export function writeKnownHosts(files: LabFiles, state: LabState): void {
  const lines = [
    ...state.hosts.map((h) => formatKnownHost([h.name, h.address], hostKeyBlob(h))),
    ...(state.vms ?? []).map((v) =>
      formatKnownHost([v.name, v.address], Buffer.from(v.hostKey.split(/\s+/)[1] ?? '', 'base64')),
    ),
    ...(state.arm64 ?? []).map((h) => formatKnownHost([h.name, h.address], hostKeyBlob(h))),
  ];
  write(files.knownHosts, `${lines.join('\n')}\n`, 0o644);
}

/**
 * The i-th host's inventory roles. An inner host is etcd only: the apiserver gate asks each control-plane
 * host's address:6443 from this machine (gates/apiserver.ts), which has no route to the inner network. On
 * a lab made with --workers every other host is a worker too, as kubeadm's control-plane nodes can be,
 * unless the lab has dedicated workers: then those are workers only, and the others etcd + control plane.
 */
export function hostRoles(
  state: Pick<LabState, 'hosts' | 'workers' | 'dedicatedWorkers'>,
  i: number,
): ('etcd' | 'control-plane' | 'worker')[] {
  const dedicated = state.dedicatedWorkers ?? 0;
  if (state.hosts[i]!.jump) return ['etcd'];
  if (i >= state.hosts.length - dedicated) return ['worker'];
  return state.workers && dedicated === 0
    ? ['etcd', 'control-plane', 'worker']
    : ['etcd', 'control-plane'];
}

/**
 * With two or more control-plane hosts, the lab network's .10 (hosts start at .11) is the API's VIP,
 * on host0, the lab hosts' interface: every node then survives losing any one control-plane host.
 */
export function labVip(
  state: Pick<LabState, 'hosts' | 'workers' | 'dedicatedWorkers' | 'subnet'>,
): { apiServerVip?: { address: string; interface: string } } {
  const cps = state.hosts.filter((_, i) => hostRoles(state, i).includes('control-plane')).length;
  if (cps < 2) return {};
  return {
    apiServerVip: { address: state.subnet.replace(/\.0\/\d+$/, '.10'), interface: 'host0' },
  };
}

export function writeLabInventory(files: LabFiles, state: LabState): void {
  const doc: InventoryInput = {
    apiVersion: 'hardwire/v1',
    kind: 'Inventory',
    cluster: { name: state.name, ...labVip(state) },
    hosts: [
      ...state.hosts.map((h, i) => ({
        name: h.name,
        address: h.address,
        roles: hostRoles(state, i),
        ssh: {
          user: 'root',
          port: 22,
          identityFile: files.key,
          ...(h.jump ? { proxyJump: proxyJumpOf(h) } : {}),
        },
      })),
      // VMs and arm64 hosts: workers only (an arm64 one is read and planned, never wired: docs/lab.md).
      ...[...(state.vms ?? []), ...(state.arm64 ?? [])].map((v) => ({
        name: v.name,
        address: v.address,
        roles: ['worker' as const],
        ssh: { user: 'root', port: 22, identityFile: files.key },
      })),
    ],
    knownHosts: files.knownHosts,
  };
  write(
    files.inventory,
    `# Written by "hardwire lab up --name ${state.name}". Regenerated on every up.\n${stringify(doc)}`,
    0o644,
  );
}
