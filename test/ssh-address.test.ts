// ssh.address (issue 43): SSH dials it and pins the host key under it, while certificates, unit
// flags, kubelet's node IP and pod routes keep hosts[].address. The dial runs against an ssh2 server
// on 127.0.0.1 here; any other dial is stopped before a packet leaves (see `dialled`).
import { X509Certificate } from 'node:crypto';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Server as SshServer, type ConnectConfig } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { loadInventory, parseInventory, type Inventory } from '../core/inventory/load.ts';
import { renderHostTree, type HostTree } from '../core/render/host-tree.ts';
import { connect } from '../core/transport/dial.ts';
import { generateEd25519 } from '../core/transport/keygen.ts';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';
import { stepErrorOf } from './helpers/step-error.ts';

const CLUSTER = { 'cp-0': '198.51.100.10', 'w-1': '198.51.100.21', 'w-2': '198.51.100.22' };
const SSH = { 'cp-0': '203.0.113.10', 'w-1': 'w1.example.net', 'w-2': '203.0.113.22' };

function inventoryText(ssh: Record<string, Record<string, unknown>>): string {
  return stringify({
    apiVersion: 'hardwire/v1',
    kind: 'Inventory',
    cluster: { name: 'demo' },
    hosts: [
      { name: 'cp-0', address: CLUSTER['cp-0'], roles: ['etcd', 'control-plane'] },
      { name: 'w-1', address: CLUSTER['w-1'], roles: ['worker'] },
      { name: 'w-2', address: CLUSTER['w-2'], roles: ['worker'] },
    ].map((h) => (ssh[h.name] ? { ...h, ssh: ssh[h.name] } : h)),
  });
}

describe('inventory: ssh.address', () => {
  it('is optional, and accepts an IPv4 address, a DNS name, or loopback (a forwarded port)', () => {
    const none = parseInventory(inventoryText({}));
    expect(none.hosts.map((h) => h.ssh.address)).toEqual([undefined, undefined, undefined]);
    const inv = parseInventory(
      inventoryText({
        'cp-0': { address: SSH['cp-0'] },
        'w-1': { address: SSH['w-1'] },
        'w-2': { address: '127.0.0.1', port: 2222 },
      }),
    );
    expect(inv.hosts.map((h) => [h.address, h.ssh.address])).toEqual([
      [CLUSTER['cp-0'], SSH['cp-0']],
      [CLUSTER['w-1'], SSH['w-1']],
      [CLUSTER['w-2'], '127.0.0.1'],
    ]);
  });
});

describe('rendered host trees keep the cluster address', () => {
  let inv: Inventory;
  let trees: HostTree[];

  beforeAll(() => {
    const dir = tempDir();
    const file = join(dir, 'inventory.yaml');
    writeFileSync(
      file,
      inventoryText(Object.fromEntries(Object.entries(SSH).map(([h, a]) => [h, { address: a }]))),
    );
    const state = join(dir, 'state');
    const r = hardwire(['pki', '--inventory', file, '--state-dir', state]);
    expect(r.code, r.stderr).toBe(0);
    inv = loadInventory(file);
    trees = inv.hosts.map((h) => renderHostTree(inv, h, join(state, 'demo', 'pki')));
  }, 120_000);

  const text = (t: HostTree, path: string) =>
    t.files.find((f) => f.path === path)?.content.toString('utf8') ?? '';

  it('certificates hold the cluster address, and no SSH address', () => {
    const sans = new Map<string, string>();
    for (const t of trees)
      for (const f of t.files) {
        const pem = f.content.toString('utf8');
        if (!pem.startsWith('-----BEGIN CERTIFICATE-----')) continue;
        sans.set(`${t.host.name}:${f.path}`, new X509Certificate(pem).subjectAltName ?? '');
      }
    expect(sans.get('cp-0:/etc/kubernetes/pki/apiserver.crt')).toContain(
      `IP Address:${CLUSTER['cp-0']}`,
    );
    expect(sans.get('cp-0:/etc/kubernetes/pki/etcd/peer.crt')).toContain(
      `IP Address:${CLUSTER['cp-0']}`,
    );
    expect(sans.get('w-1:/var/lib/kubelet/pki/kubelet.crt')).toContain(
      `IP Address:${CLUSTER['w-1']}`,
    );
    for (const [where, san] of sans)
      for (const a of Object.values(SSH)) expect(san, where).not.toContain(a);
  });

  it('unit flags, node-ip and routes hold the cluster address; no file names an SSH address', () => {
    const [cp, w1] = trees as [HostTree, HostTree];
    const etcd = text(cp, '/etc/systemd/system/etcd.service');
    expect(etcd).toContain(`--listen-peer-urls=https://${CLUSTER['cp-0']}:2380`);
    expect(etcd).toContain(`--initial-advertise-peer-urls=https://${CLUSTER['cp-0']}:2380`);
    const apiserver = text(cp, '/etc/systemd/system/kube-apiserver.service');
    expect(apiserver).toContain(`--advertise-address=${CLUSTER['cp-0']}`);
    expect(apiserver).toContain(`via ${CLUSTER['w-1']}`);
    expect(text(w1, '/etc/systemd/system/kubelet.service')).toContain(
      `--node-ip=${CLUSTER['w-1']}`,
    );
    expect(text(w1, '/etc/systemd/system/containerd.service')).toContain(`via ${CLUSTER['w-2']}`);
    const named = trees.flatMap((t) =>
      t.files.flatMap((f) =>
        Object.values(SSH)
          .filter((a) => f.content.includes(a))
          .map((a) => `${t.host.name}:${f.path} names ${a}`),
      ),
    );
    expect(named).toEqual([]);
  });
});

describe('the transport dials ssh.address and pins the key under it', () => {
  const hostKey = generateEd25519();
  const otherKey = generateEd25519();
  const clientKey = generateEd25519();
  const dir = tempDir();
  const identityFile = join(dir, 'id_ed25519');
  /** Every host:port the transport asked ssh2 to dial; one that is not 127.0.0.1 is failed here, unsent. */
  const dialled: string[] = [];
  /** Where a jump session asked the test sshd to forward to (refused, so never dialled). */
  const forwards: string[] = [];
  /** The local address each connection to the test sshd arrived on. */
  const arrived: string[] = [];
  let tcp: NetServer;
  let port = 0;
  let host: Inventory['hosts'][number];

  beforeAll(async () => {
    writeFileSync(identityFile, clientKey.private, { mode: 0o600 });
    const clientBlob = Buffer.from(clientKey.public.split(' ')[1]!, 'base64');
    const sshd = new SshServer({ hostKeys: [hostKey.private] }, (conn) => {
      conn.on('authentication', (ctx) => {
        if (ctx.method === 'publickey' && ctx.key.data.equals(clientBlob)) ctx.accept();
        else ctx.reject(['publickey']);
      });
      conn.on('ready', () => {
        conn.on('session', (acceptSession) =>
          acceptSession().once('exec', (acceptExec) => {
            const ch = acceptExec();
            ch.write(`${arrived.at(-1)}\n`);
            ch.exit(0);
            ch.end();
          }),
        );
        conn.on('tcpip', (_accept, reject, info) => {
          forwards.push(`${info.destIP}:${info.destPort}`);
          reject();
        });
      });
      conn.on('error', () => {});
    });
    tcp = createServer((sock: Socket) => {
      arrived.push(`${sock.localAddress}:${sock.localPort}`);
      sshd.injectSocket(sock);
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    port = (tcp.address() as { port: number }).port;
    const original = Client.prototype.connect;
    vi.spyOn(Client.prototype, 'connect').mockImplementation(function (
      this: Client,
      cfg: ConnectConfig,
    ) {
      dialled.push(`${cfg.host}:${cfg.port}`);
      if (cfg.host === '127.0.0.1') return original.call(this, cfg);
      process.nextTick(() =>
        this.emit('error', Object.assign(new Error('not dialled by this test'), { code: 'TEST' })),
      );
      return this;
    });
    host = parseInventory(inventoryText({ 'cp-0': { address: '127.0.0.1', port, identityFile } }))
      .hosts[0]!;
  });

  afterAll(() => {
    vi.restoreAllMocks();
    tcp?.close();
  });

  const knownHosts = (lines: string[]) => {
    const f = join(dir, `known_hosts-${lines.length}-${dialled.length}`);
    writeFileSync(f, `${lines.join('\n')}\n`);
    return f;
  };

  it('connects to ssh.address, with the key pinned under it; the cluster address pins another key', async () => {
    expect(host.address).toBe(CLUSTER['cp-0']);
    const before = dialled.length;
    const s = await connect(host, {
      knownHostsFile: knownHosts([
        `[127.0.0.1]:${port} ${hostKey.public}`,
        // A pin under the cluster address that the SSH address does not serve: a lookup there would refuse.
        `[${CLUSTER['cp-0']}]:${port} ${otherKey.public}`,
      ]),
      timeoutMs: 10_000,
    });
    try {
      expect(dialled.slice(before)).toEqual([`127.0.0.1:${port}`]);
      expect((await s.exec(['true'])).stdout.trim()).toBe(`127.0.0.1:${port}`);
    } finally {
      await s.close();
    }
  });

  it('a pin for the cluster address alone does not vouch for the SSH address', async () => {
    const err = await stepErrorOf(
      connect(host, {
        knownHostsFile: knownHosts([`[${CLUSTER['cp-0']}]:${port} ${hostKey.public}`]),
        timeoutMs: 10_000,
      }),
    );
    expect(err.step).toBe('ssh-host-key-unknown');
    expect(err.message).toContain(`of 127.0.0.1:${port} is not in`);
  });

  it('without ssh.address it dials the cluster address, as before', async () => {
    const before = dialled.length;
    const { address: _, ...ssh } = host.ssh;
    const err = await stepErrorOf(connect({ ...host, ssh }, { knownHostsFile: knownHosts([]) }));
    expect(dialled.slice(before)).toEqual([`${CLUSTER['cp-0']}:${port}`]);
    expect(err.message).toContain(`cannot connect to ${CLUSTER['cp-0']}:${port} (TEST)`);
  });

  it('through a jump host, the forward goes to ssh.address', async () => {
    const before = forwards.length;
    const jumped = {
      ...host,
      ssh: { ...host.ssh, address: SSH['w-1'], proxyJump: `root@127.0.0.1:${port}` },
    };
    const err = await stepErrorOf(
      connect(jumped, {
        knownHostsFile: knownHosts([`[127.0.0.1]:${port} ${hostKey.public}`]),
        timeoutMs: 10_000,
      }),
    );
    // The test sshd refuses the forward after noting where it was asked to go: nothing is dialled.
    expect(forwards.slice(before)).toEqual([`${SSH['w-1']}:${port}`]);
    expect(err.step).toBe('ssh-proxy-jump');
  });
});
