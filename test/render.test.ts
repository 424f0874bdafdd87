// Rendered host trees: layout, flags, and the real systemd-analyze.
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';
import { PINNED_KUBERNETES } from '../lib/constants.ts';

const inventory = join(import.meta.dirname, '..', 'hosts', 'example.yaml');
let state: string;
const hostDir = (h: string) => join(state, 'demo', 'hosts', h);
const unit = (h: string, c: string) =>
  readFileSync(join(hostDir(h), 'etc/systemd/system', `${c}.service`), 'utf8');

function execStartFlags(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('--'))
    .map((l) => l.replace(/ \\$/, ''));
}

beforeAll(() => {
  state = tempDir();
  const r = hardwire(['render', '--inventory', inventory, '--state-dir', state]);
  expect(r.code, r.stderr).toBe(0);
});

describe('render', () => {
  it("writes kubeadm's layout on every host", () => {
    for (const h of ['cp-0', 'cp-1', 'cp-2']) {
      for (const f of [
        'etc/kubernetes/pki/ca.crt',
        'etc/kubernetes/pki/apiserver.key',
        'etc/kubernetes/pki/etcd/server.crt',
        'etc/kubernetes/pki/etcd/peer.key',
        'etc/kubernetes/pki/sa.pub',
        'etc/kubernetes/admin.conf',
        'etc/kubernetes/controller-manager.conf',
        'etc/kubernetes/scheduler.conf',
        'etc/kubernetes/encryption-config.yaml',
        'etc/systemd/system/etcd.service',
        'etc/systemd/system/kube-apiserver.service',
        'etc/systemd/system/kube-controller-manager.service',
        'etc/systemd/system/kube-scheduler.service',
      ]) {
        expect(existsSync(join(hostDir(h), f)), `${h}:${f}`).toBe(true);
      }
    }
    expect(existsSync(join(hostDir('cp-0'), 'etc/kubernetes/super-admin.conf'))).toBe(true);
    expect(existsSync(join(hostDir('cp-1'), 'etc/kubernetes/super-admin.conf'))).toBe(false);
    expect(statSync(join(hostDir('cp-1'), 'etc/kubernetes/pki/etcd/peer.key')).mode & 0o777).toBe(
      0o600,
    );
    // each host gets its own etcd member cert
    const s1 = readFileSync(join(hostDir('cp-1'), 'etc/kubernetes/pki/etcd/server.crt'), 'utf8');
    expect(s1).toBe(readFileSync(join(state, 'demo/pki/etcd/cp-1/server.crt'), 'utf8'));
  });

  it('every flag is one --flag=value line with a reason above it', () => {
    for (const c of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']) {
      const text = unit('cp-0', c);
      const flags = execStartFlags(text);
      expect(flags.length).toBeGreaterThan(4);
      for (const f of flags) {
        expect(f, c).toMatch(/^--[a-z0-9-]+=\S+$/);
        const name = f.slice(2, f.indexOf('='));
        expect(text, `${c} ${name}`).toMatch(new RegExp(`# --${name}: \\S`));
      }
    }
  });

  it('every flag carries the source line that reads it, from the flag map', () => {
    // The expected citation is read straight from the committed flag map JSON (not through
    // flags/map.ts, which the renderer uses): the first ranked read site of that flag, with its hop count.
    for (const c of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']) {
      const map = JSON.parse(
        readFileSync(
          join(import.meta.dirname, '..', 'core', 'flags', 'data', PINNED_KUBERNETES, `${c}.json`),
          'utf8',
        ),
      ) as {
        flags: {
          name: string;
          consumedAt: {
            module: string;
            version: string;
            file: string;
            line: number;
            kind: string;
            hop?: number;
            copyTo?: string;
          }[];
        }[];
      };
      const lines = unit('cp-0', c)
        .split('\n')
        .map((l) => l.trim());
      let cited = 0;
      lines.forEach((l, i) => {
        if (!l.startsWith('--')) return;
        const name = l.slice(2, l.indexOf('='));
        const entry = map.flags.find((f) => f.name === name);
        expect(entry, `${c} --${name} is in the flag map`).toBeDefined();
        const read = entry!.consumedAt[0];
        expect(read, `${c} --${name} has a read site in the flag map`).toBeDefined();
        const site = `${read!.module}@${read!.version}/${read!.file}:${read!.line}`;
        const m = /^# {3}(read at|only copied, at) (\S+\.go:\d+)( \(.+\))?$/.exec(
          lines[i - 1] ?? '',
        );
        expect(m, `${c} ${l}: citation line "${lines[i - 1]}"`).not.toBeNull();
        expect(m![2], `${c} --${name} cites the flag map's first read site`).toBe(site);
        // Only copied: every read that acts (validation and generated code aside) just copies the value.
        const acting = entry!.consumedAt.filter(
          (r) => r.kind !== 'validation' && r.kind !== 'generated',
        );
        const onlyCopied = acting.length > 0 && acting.every((r) => r.copyTo);
        expect(m![1], `${c} --${name}`).toBe(onlyCopied ? 'only copied, at' : 'read at');
        if (onlyCopied) expect(lines[i - 2]).toMatch(/only copied/);
        else if (read!.hop)
          expect(m![3], `${c} --${name} hops`).toContain(
            `(${read!.hop} cop${read!.hop === 1 ? 'y' : 'ies'} away)`,
          );
        else expect(m![3] ?? '', `${c} --${name} hops`).not.toMatch(/away/);
        cited++;
      });
      expect(cited, c).toBeGreaterThan(4);
    }
  });

  it('refuses an extraArgs flag the component does not register', () => {
    const dir = tempDir();
    const inv = join(dir, 'inv.yaml');
    writeFileSync(
      inv,
      readFileSync(inventory, 'utf8').replace(
        'extraSANs: []',
        'extraSANs: []\n  extraArgs:\n    kube-scheduler: {leader-elekt: "true"}',
      ),
    );
    const r = hardwire(['render', '--inventory', inv, '--state-dir', join(dir, 's')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      'error: cluster.extraArgs.kube-scheduler.leader-elekt: kube-scheduler (Kubernetes v1.36.3) registers no flag --leader-elekt; see "hardwire flags kube-scheduler"',
    );
  });

  it("avoids KTHW's mistakes: service range, etcd TLS, every etcd member", () => {
    const api = execStartFlags(unit('cp-1', 'kube-apiserver'));
    expect(api).toContain('--service-cluster-ip-range=10.96.0.0/12');
    expect(api).toContain(
      '--etcd-servers=https://198.51.100.10:2379,https://198.51.100.11:2379,https://198.51.100.12:2379',
    );
    expect(api).toContain('--etcd-cafile=/etc/kubernetes/pki/etcd/ca.crt');
    expect(api).toContain('--etcd-certfile=/etc/kubernetes/pki/apiserver-etcd-client.crt');
    expect(api).toContain('--advertise-address=198.51.100.11');
    // Exact sets: a flag added to a model (a wider listener, a weaker auth setting) must show up here.
    const sorted = (xs: string[]) => [...xs].sort();
    expect(sorted(execStartFlags(unit('cp-1', 'etcd')))).toEqual(
      sorted([
        '--name=cp-1',
        '--data-dir=/var/lib/etcd',
        '--listen-client-urls=https://127.0.0.1:2379,https://198.51.100.11:2379',
        '--advertise-client-urls=https://198.51.100.11:2379',
        '--listen-peer-urls=https://198.51.100.11:2380',
        '--initial-advertise-peer-urls=https://198.51.100.11:2380',
        '--initial-cluster=cp-0=https://198.51.100.10:2380,cp-1=https://198.51.100.11:2380,cp-2=https://198.51.100.12:2380',
        '--initial-cluster-state=new',
        '--initial-cluster-token=hardwire-demo',
        '--client-cert-auth=true',
        '--trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt',
        '--cert-file=/run/credentials/etcd.service/server.crt',
        '--key-file=/run/credentials/etcd.service/server.key',
        '--peer-client-cert-auth=true',
        '--peer-trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt',
        '--peer-cert-file=/run/credentials/etcd.service/peer.crt',
        '--peer-key-file=/run/credentials/etcd.service/peer.key',
        '--listen-metrics-urls=http://127.0.0.1:2381',
        '--snapshot-count=10000',
      ]),
    );
    expect(sorted(execStartFlags(unit('cp-2', 'kube-controller-manager')))).toEqual(
      sorted([
        '--allocate-node-cidrs=true',
        '--cluster-cidr=10.244.0.0/16',
        '--cluster-name=demo',
        '--service-cluster-ip-range=10.96.0.0/12',
        '--authentication-kubeconfig=/etc/kubernetes/controller-manager.conf',
        '--authorization-kubeconfig=/etc/kubernetes/controller-manager.conf',
        '--kubeconfig=/etc/kubernetes/controller-manager.conf',
        '--bind-address=127.0.0.1',
        '--leader-elect=true',
        '--profiling=false',
        '--client-ca-file=/etc/kubernetes/pki/ca.crt',
        '--requestheader-client-ca-file=/etc/kubernetes/pki/front-proxy-ca.crt',
        '--root-ca-file=/etc/kubernetes/pki/ca.crt',
        '--cluster-signing-cert-file=/etc/kubernetes/pki/ca.crt',
        '--cluster-signing-key-file=/etc/kubernetes/pki/ca.key',
        '--service-account-private-key-file=/etc/kubernetes/pki/sa.key',
        '--use-service-account-credentials=true',
      ]),
    );
    expect(sorted(execStartFlags(unit('cp-2', 'kube-scheduler')))).toEqual(
      sorted([
        '--authentication-kubeconfig=/etc/kubernetes/scheduler.conf',
        '--authorization-kubeconfig=/etc/kubernetes/scheduler.conf',
        '--kubeconfig=/etc/kubernetes/scheduler.conf',
        '--bind-address=127.0.0.1',
        '--leader-elect=true',
        '--profiling=false',
      ]),
    );
  });

  it('units pass systemd-analyze verify, apart from the binaries not installed here', () => {
    const dir = join(hostDir('cp-0'), 'etc/systemd/system');
    const files = readdirSync(dir).map((f) => join(dir, f));
    const r = spawnSync('systemd-analyze', ['verify', ...files], { encoding: 'utf8' });
    const problems = (r.stderr + r.stdout)
      .split('\n')
      .filter(
        (l) =>
          l.trim() &&
          !/Command \/usr\/local\/bin\/[a-z-]+ is not executable: No such file or directory/.test(
            l,
          ),
      );
    expect(problems).toEqual([]);
  });

  it('a second render changes no byte', () => {
    const snapshot = () =>
      Object.fromEntries(
        readdirSync(join(state, 'demo'), { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => {
            const p = join(e.parentPath, e.name);
            return [
              p,
              `${createHash('sha256').update(readFileSync(p)).digest('hex')}@${statSync(p).mtimeMs}`,
            ];
          }),
      );
    const before = snapshot();
    const r = hardwire(['render', '--inventory', inventory, '--state-dir', state, '--json']);
    expect(r.code).toBe(0);
    expect(
      JSON.parse(r.stdout).hosts.every((h: { changed: unknown[] }) => h.changed.length === 0),
    ).toBe(true);
    expect(snapshot()).toEqual(before);
  });
});
