// The plan is a pure function: no hosts needed.
import { describe, expect, it } from 'vitest';
import { buildPlan, hostsFor, type HostWant } from '../core/plan/build.ts';
import { formatPlan } from '../core/plan/format.ts';
import type { HostFacts, UnitFacts } from '../core/plan/types.ts';
import type { ComponentName } from '../core/components/models/index.ts';

const comps: ComponentName[] = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
];
const running: UnitFacts = {
  activeState: 'active',
  loadState: 'loaded',
  activeEnterMonotonic: '1',
  enabled: true,
};

function want(host: string): HostWant {
  return {
    host,
    components: comps,
    files: [
      { path: '/usr/local/bin/etcd', mode: 0o755, sha256: 'e1', readBy: ['etcd'], kind: 'binary' },
      {
        path: '/etc/kubernetes/pki/apiserver.crt',
        mode: 0o644,
        sha256: 'a1',
        readBy: ['kube-apiserver'],
        kind: 'file',
      },
      {
        path: '/etc/systemd/system/kube-scheduler.service',
        mode: 0o644,
        sha256: 's1',
        readBy: ['kube-scheduler'],
        kind: 'file',
      },
    ],
  };
}

function facts(
  host: string,
  hashes: Record<string, string | null>,
  units: Partial<Record<ComponentName, UnitFacts>> = {},
): HostFacts {
  return {
    host,
    hashes: new Map(Object.entries(hashes)),
    units: new Map(comps.map((c) => [c, units[c] ?? running])),
  };
}

const inSync = {
  '/usr/local/bin/etcd': 'e1',
  '/etc/kubernetes/pki/apiserver.crt': 'a1',
  '/etc/systemd/system/kube-scheduler.service': 's1',
};

describe('plan', () => {
  it('is a no-op when every hash matches and every unit runs', () => {
    const p = buildPlan(
      [want('a'), want('b')],
      new Map([
        ['a', facts('a', inSync)],
        ['b', facts('b', inSync)],
      ]),
    );
    expect(p.noop).toBe(true);
    expect(formatPlan(p)).toMatch(/^no changes/);
  });

  it('a fresh host gets every file and starts every unit; binaries go first', () => {
    const p = buildPlan(
      [want('a')],
      new Map([
        [
          'a',
          facts(
            'a',
            {},
            Object.fromEntries(
              comps.map((c) => [
                c,
                { ...running, loadState: 'not-found', activeState: 'inactive' },
              ]),
            ),
          ),
        ],
      ]),
    );
    const h = p.hosts[0]!;
    expect(h.changes.map((c) => c.path)).toEqual([
      '/usr/local/bin/etcd',
      '/etc/kubernetes/pki/apiserver.crt',
      '/etc/systemd/system/kube-scheduler.service',
    ]);
    expect(h.changes.every((c) => c.reason === 'missing')).toBe(true);
    expect(h.units.map((u) => u.action)).toEqual(['start', 'start', 'start', 'start']);
    expect(h.daemonReload).toBe(true);
  });

  it('a changed file restarts only the components that read it, and only on that host', () => {
    const p = buildPlan(
      [want('a'), want('b')],
      new Map([
        ['a', facts('a', { ...inSync, '/etc/kubernetes/pki/apiserver.crt': 'old' })],
        ['b', facts('b', inSync)],
      ]),
    );
    expect(hostsFor(p, 'kube-apiserver', 'restart')).toEqual(['a']);
    expect(hostsFor(p, 'etcd', 'restart')).toEqual([]);
    expect(p.hosts[0]!.units.find((u) => u.component === 'kube-apiserver')!.reasons).toEqual([
      '/etc/kubernetes/pki/apiserver.crt changed',
    ]);
    expect(p.hosts[0]!.daemonReload).toBe(false);
    expect(formatPlan(p)).toBe(
      [
        'a:',
        '  ~ /etc/kubernetes/pki/apiserver.crt (file, mode 0644, read by kube-apiserver)',
        '  > restart kube-apiserver: /etc/kubernetes/pki/apiserver.crt changed',
        'b:',
        '  files: unchanged',
        '',
      ].join('\n'),
    );
  });

  it('a failed unit with unchanged files is started again', () => {
    const p = buildPlan(
      [want('a')],
      new Map([['a', facts('a', inSync, { etcd: { ...running, activeState: 'failed' } })]]),
    );
    expect(p.noop).toBe(false);
    expect(p.hosts[0]!.units[0]).toEqual({
      component: 'etcd',
      action: 'start',
      reasons: ['is failed'],
    });
  });
});
