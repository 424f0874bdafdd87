// How `flags prove` explains a cited site that was not hit: by the condition the flag map records
// for it (the analyzer's cond.go), naming the other flag, the condition's line and, for a function
// reached only through that branch, the caller whose branch it is; else from the source around it.
import { describe, expect, it } from 'vitest';
import { classify } from '../harness/prove/classify.ts';
import { sourceLines } from '../harness/prove/source.ts';
import type { FlagPlan } from '../harness/prove/sites.ts';
import type { SiteTrace } from '../harness/prove/trace.ts';
import type { FlagEntry, ReadCondition, ReadSite } from '../core/flags/map.ts';

const MOD = 'go.etcd.io/etcd/server/v3';
const VER = 'v3.6.8';

function site(file: string, line: number, fn: string, condition?: ReadCondition): ReadSite {
  const text = sourceLines(MOD, VER, file)![line - 1]!.trim();
  return {
    module: MOD,
    version: VER,
    file,
    line,
    col: 1,
    url: '',
    package: `${MOD}/embed`,
    function: fn,
    excerpt: text,
    selector: '.ListenClientUrls',
    kind: 'consumer',
    match: 1,
    ...(condition ? { condition } : {}),
  };
}

function run(argv: string[], sites: ReadSite[], hits: number[]) {
  const flag = { name: 'listen-client-urls', value: 'https://10.0.0.1:2379' };
  const plan: FlagPlan = {
    flag,
    entry: { name: flag.name, readBy: 'read', consumedAt: sites } as unknown as FlagEntry,
    sites: sites.map((s, index) => ({
      flag: flag.name,
      index,
      site: s,
      file: `${MOD}@${VER}/${s.file}`,
      ref: `${MOD}@${VER}/${s.file}:${s.line}`,
    })),
  };
  const others: FlagPlan[] = argv.map((a) => ({
    flag: { name: a.slice(2, a.indexOf('=')), value: a.slice(a.indexOf('=') + 1) },
    sites: [],
  }));
  const traces: SiteTrace[] = plan.sites.map((s, i) => ({
    site: s,
    hits: hits[i]!,
    capped: false,
    values: [],
    ...(hits[i]
      ? {
          first: {
            file: s.file,
            line: s.site.line,
            function: `${MOD}/embed.(*Config).getListenClientURLs`,
            goroutine: 1,
          },
        }
      : {}),
  }));
  return classify([plan, ...others], traces)[0]!;
}

describe('prove: a miss at a conditional read names its condition', () => {
  // The condition's line as the analyzer records it; read back here from the module cache.
  const autoTLS: ReadCondition = {
    flags: ['auto-tls'],
    at: `${MOD}@${VER}/embed/config.go:1515`,
    text: 'if !cfg.ClientAutoTLS {',
  };
  const configFile: ReadCondition = {
    flags: ['config-file'],
    at: `${MOD}@${VER}/etcdmain/config.go:171`,
    text: 'if cfg.configFile != "" {',
    caller: '(*config).parse',
  };

  it('the conditions used here are the lines of etcd v3.6.8 they cite', () => {
    for (const c of [autoTLS, configFile]) {
      const [, file, line] = /@v[^/]+\/(.+):(\d+)$/.exec(c.at)!;
      expect(sourceLines(MOD, VER, file!)![Number(line) - 1]!.trim()).toBe(c.text);
    }
  });

  it("names the other flag and the condition's file:line, and that the unit does not pass it", () => {
    const r = run([], [site('embed/config.go', 1522, '(*Config).ClientSelfCert', autoTLS)], [0]);
    expect(r.verdict).toBe('not hit');
    expect(r.sites[0]!.reason).toBe(
      'conditional on --auto-tls: embed/config.go:1515 `if !cfg.ClientAutoTLS {`; the unit does not pass it',
    );
    expect(r.reason).toBe(r.sites[0]!.reason);
  });

  it("for a function that never ran, names its caller's condition, and the unit's value when it passes the flag", () => {
    const r = run(
      ['--config-file=/etc/etcd.yaml'],
      [site('embed/config.go', 979, '(*configYAML).configFromFile', configFile)],
      [0],
    );
    expect(r.sites[0]!.reason).toBe(
      'conditional on --config-file: etcdmain/config.go:171 `if cfg.configFile != "" {`, in (*config).parse, the only caller of (*configYAML).configFromFile; the unit passes --config-file=/etc/etcd.yaml, but the branch did not run before the gate passed',
    );
  });

  it('without a condition in the map, explains from the source; a hit needs no reason', () => {
    const r = run(
      [],
      [
        site('embed/config.go', 1522, '(*Config).ClientSelfCert'),
        site('embed/config.go', 1655, '(*Config).getListenClientURLs'),
      ],
      [0, 1],
    );
    expect(r.sites[0]!.reason).toMatch(
      /^conditional path: after the early returns of line 1515 `if !cfg\.ClientAutoTLS \{`/,
    );
    expect(r.sites[1]!.status).toBe('hit');
    expect(r.sites[1]!.reason).toBeUndefined();
    expect(r.verdict).toBe('hit');
  });
});
