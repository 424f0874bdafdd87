// upgrade plan (issue 24): "new and recommended". What each binary the inventory runs has at the
// target and not at the source, re-derived here from the two committed JSON files; "recommended"
// on synthetic maps, only where a deprecation message names the new flag.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hardwire } from './helpers/cli.ts';
import { moduleDir, reopen } from './helpers/modcache.ts';
import type { FlagEntry, FlagMap } from '../core/flags/map.ts';
import { newAtTarget } from '../core/upgrade/new.ts';
import { repoRoot } from '../lib/paths.ts';

const WORKERS = join(repoRoot, 'hosts/example-workers.yaml');

function committed(version: string, component: string): FlagMap {
  return JSON.parse(
    readFileSync(join(repoRoot, 'core', 'flags', 'data', version, `${component}.json`), 'utf8'),
  ) as FlagMap;
}

type Row = { kind: string; name: string; recommended: unknown };

describe('new at v1.37.2, against the committed maps', () => {
  const r = hardwire([
    'upgrade',
    'plan',
    '--to',
    'v1.37.2',
    '--offline',
    '--inventory',
    WORKERS,
    '--json',
  ]);
  const doc = JSON.parse(r.stdout) as {
    blocking: number;
    components: { component: string }[];
    new: { component: string; rows: Row[] }[];
  };

  it('per component the inventory runs: the flags and config fields v1.37.2 has and v1.36.3 has not, none recommended, none blocking', () => {
    // etcd has a table per hop; what is new is counted once, from the cluster's etcd to the last hop's.
    const components = [...new Set(doc.components.map((c) => c.component))];
    expect(components).toEqual([
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
      'kubelet',
      'kube-proxy',
    ]);
    let seen = 0;
    for (const c of components) {
      const a = committed('v1.36.3', c);
      const b = committed('v1.37.2', c);
      const flags = b.flags
        .filter((f) => !a.flags.some((g) => g.name === f.name))
        .map((f) => `flag ${f.name}`);
      const fields = (b.config?.fields ?? [])
        .filter((f) => !(a.config?.fields ?? []).some((g) => g.key === f.key))
        .map((f) => `config field ${f.key}`);
      const rows = doc.new.find((g) => g.component === c)?.rows ?? [];
      expect(rows.map((x) => `${x.kind} ${x.name}`).sort(), c).toEqual(
        [...flags, ...fields].sort(),
      );
      // No deprecation message at either tag names one of them as --name.
      const messages = [...a.flags, ...b.flags].map((f) => f.deprecatedMessage ?? '').join('\n');
      for (const x of rows)
        expect(x.recommended, `${c} ${x.name}`).toEqual(
          x.kind === 'flag' && messages.includes(`--${x.name} `) ? expect.anything() : null,
        );
      seen += rows.length;
    }
    expect(seen).toBeGreaterThan(0);
    expect(r.code).toBe(doc.blocking === 0 ? 0 : 1);
    expect(doc.blocking).toBe(0);
  });

  it("the rule's example in core/upgrade/new.ts says what the comment says", () => {
    const line = reopen(
      moduleDir('k8s.io/kubernetes', 'v1.36.3'),
      'cmd/kube-proxy/app/options.go',
      175,
    );
    expect(line).toContain('fs.MarkDeprecated("healthz-port"');
    expect(line).toContain('Please use --healthz-bind-address instead.');
  });
});

function flag(name: string, over: Partial<FlagEntry> = {}): FlagEntry {
  return {
    name,
    type: 'string',
    default: '',
    help: `${name} help`,
    deprecated: false,
    hidden: false,
    field: '',
    path: '',
    binding: 'field',
    registeredAt: null,
    readBy: 'read',
    consumedTotal: 0,
    consumedAt: [],
    ...over,
  };
}

function map(version: string, flags: FlagEntry[]): FlagMap {
  return {
    component: 'kube-proxy',
    kubernetesVersion: version,
    componentVersion: version,
    root: '',
    method: '',
    gaps: [],
    flags,
    coverage: {
      flags: 0,
      registered: 0,
      withRead: 0,
      validationOnly: 0,
      copyOnly: 0,
      neverRead: 0,
      unregistered: 0,
    },
  };
}

describe('recommended, on synthetic maps', () => {
  const from = map('v1.36.3', [
    flag('old-port', { deprecated: true, deprecatedMessage: 'Please use --new-address instead.' }),
    flag('kept'),
  ]);
  const to = map('v1.37.2', [
    flag('old-port', { deprecated: true, deprecatedMessage: 'Please use --new-address instead.' }),
    flag('kept'),
    flag('new-address'),
    flag('new-addr'),
    flag('unrelated'),
  ]);
  const rows = () =>
    newAtTarget(
      { 'kube-proxy': from },
      { 'kube-proxy': to },
      { 'kube-proxy': [{ name: 'old-port', value: '10256' }] },
    )[0]?.rows ?? [];

  it('lists only what the source lacks', () => {
    expect(rows().map((x) => x.name)).toEqual(['new-address', 'new-addr', 'unrelated']);
  });

  it('recommends a new flag only when a deprecation message names it, whole', () => {
    const by = Object.fromEntries(rows().map((x) => [x.name, x.recommended]));
    expect(by['new-address']).toEqual({
      replaces: 'old-port',
      version: 'v1.36.3',
      message: 'Please use --new-address instead.',
      registeredAt: null,
      passed: true,
    });
    expect(by['new-addr']).toBeNull();
    expect(by.unrelated).toBeNull();
  });
});
