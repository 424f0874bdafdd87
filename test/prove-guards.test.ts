// Guards evaluated live (harness/prove/guards.ts): each branch a cited read needs, from the flag
// map's `guards` (the analyzer's guards.go), gets a tracepoint where delve evaluates the condition
// and its operands; a read not hit whose guard kept it out at every stop is off in this run. The
// guards are etcd v3.6.8's, from the committed map, each read back from the module cache first. A
// scripted delve stands in for the real one here (test/flags-prove.test.ts runs the real thing):
// it answers each tracepoint's variables from a table, as delve's evaluator would.
import { describe, expect, it } from 'vitest';
import { loadFlagMap, siteRef, type ReadSite } from '../core/flags/map.ts';
import { sourceLines } from '../harness/prove/source.ts';
import { planGuards, type FlagPlan } from '../harness/prove/sites.ts';
import { setTracepoints, traceUntil, HIT_CAP } from '../harness/prove/trace.ts';
import { classify } from '../harness/prove/classify.ts';
import { operands } from '../harness/prove/guards.ts';
import type { DlvClient, DlvState, DlvVariable } from '../harness/delve/rpc.ts';

const map = loadFlagMap('etcd', 'v1.36.3');

function site(flag: string, fileLine: string): ReadSite {
  const s = map.flags
    .find((f) => f.name === flag)!
    .consumedAt.find((c) => `${c.file}:${c.line}` === fileLine);
  expect(s, `--${flag} at ${fileLine}`).toBeDefined();
  for (const g of s!.guards ?? []) {
    const [, mod, ver, file, line] = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(g.at)!;
    const text = sourceLines(mod!, ver!, file!)![Number(line) - 1]!.trim();
    expect(g.text.startsWith(text), `${g.at}: ${text}`).toBe(true);
    for (const o of operands(g.expr)) expect(g.text, g.at).toContain(o);
  }
  return s!;
}

const plan = (flag: string, value: string, s: ReadSite): FlagPlan => ({
  flag: { name: flag, value },
  entry: map.flags.find((f) => f.name === flag)!,
  sites: [{ flag, index: 0, site: s, file: `${s.module}@${s.version}/${s.file}`, ref: siteRef(s) }],
});

type Stop = { line: number; values: Record<string, string> };

/** Delve as prove drives it: a tracepoint per line, each stop's variables answered from `values` (anything else: not readable, as a call is). */
function scripted(file: string, stops: Stop[]) {
  const bps: { id: number; line: number; vars: string[] }[] = [];
  let halted = false;
  let wake: () => void = () => undefined;
  let open: () => void = () => undefined;
  const gateOpen = new Promise<void>((res) => {
    open = res;
  });
  const idle: DlvState = { Pid: 1, Running: false, exited: false, exitStatus: 0, Threads: [] };
  const variable = (name: string, v: string | undefined): DlvVariable => ({
    name,
    type: 'bool',
    kind: v === undefined ? 0 : 1,
    value: v ?? '',
    len: 0,
    children: [],
    unreadable: v === undefined ? "function calls not allowed without using 'call'" : '',
  });
  const queue = [...stops];
  const client = {
    async trace(f: string, line: number, vars: string[]) {
      expect(f).toBe(file);
      const b = { id: bps.length + 1, line, vars };
      bps.push(b);
      return { id: b.id, file: f, line, addrs: [1] };
    },
    async functions() {
      return [];
    },
    async command(name: 'continue' | 'halt'): Promise<DlvState> {
      if (name === 'halt') {
        halted = true;
        wake();
        return idle;
      }
      await new Promise((res) => setTimeout(res, 1));
      const s = queue.shift();
      if (s) {
        const bp = bps.find((b) => b.line === s.line)!;
        return {
          ...idle,
          Threads: [
            {
              id: 1,
              file,
              line: s.line,
              goroutineID: 1,
              function: {
                name: 'go.etcd.io/etcd/server/v3/embed.(*Config).UpdateDefaultClusterFromName',
              },
              breakPoint: { id: bp.id, file, line: s.line },
              breakPointInfo: { variables: bp.vars.map((v) => variable(v, s.values[v])) },
            },
          ],
        };
      }
      open();
      if (!halted)
        await new Promise<void>((res) => {
          wake = res;
        });
      halted = false;
      return idle;
    },
    async clear() {
      /* a capped tracepoint */
    },
    async breakpoints() {
      return [];
    },
  };
  return { client: client as unknown as DlvClient, bps, gateOpen };
}

async function prove(
  flag: string,
  value: string,
  s: ReadSite,
  stops: Stop[],
  more: FlagPlan[] = [],
) {
  const plans = [plan(flag, value, s), ...more];
  const d = scripted(`${s.module}@${s.version}/${s.file}`, stops);
  const traced = await setTracepoints(
    d.client,
    plans.flatMap((p) => p.sites),
    planGuards(plans),
  );
  const out = await traceUntil(d.client, traced, () => d.gateOpen);
  return {
    result: classify(plans, out.traces, () => undefined, 'the unit', out.guards)[0]!,
    bps: d.bps,
  };
}

describe('flags prove: guards evaluated live', () => {
  // config.go:1580 sets --initial-cluster from --name only when the unit passed no --initial-cluster.
  const name1580 = site('name', 'embed/config.go:1580');
  const g1579 = 'cfg.Name != DefaultName && cfg.InitialCluster == defaultInitialCluster';

  it('carries the guards of a read from the map, innermost first, each at its line in the module cache', () => {
    expect(name1580.guards?.map((g) => [g.at.replace(/^.*\//, ''), g.expr, !!g.negated])).toEqual([
      ['config.go:1579', g1579, false],
      ['config.go:1564', 'defaultHostname == "" || defaultHostStatus != nil', true],
    ]);
    expect(
      site('name', 'embed/config.go:1567').guards?.map((g) => g.at.replace(/^.*\//, '')),
    ).toEqual(['config.go:1566', 'config.go:1564']);
  });

  it('a miss whose guard was false at every stop is off in this run, with the values delve read', async () => {
    const { result, bps } = await prove('name', 'node1', name1580, [
      {
        line: 1564,
        values: {
          'defaultHostname == "" || defaultHostStatus != nil': 'false',
          'defaultHostname == ""': 'false',
          'defaultHostStatus != nil': 'false',
        },
      },
      {
        line: 1579,
        values: {
          [g1579]: 'false',
          'cfg.Name != DefaultName': 'true',
          'cfg.InitialCluster == defaultInitialCluster': 'false',
        },
      },
    ]);
    // One tracepoint at the site, one per guard; each guard's the whole condition, then its operands.
    expect(bps.map((b) => [b.line, b.vars])).toEqual([
      [1580, []],
      [1579, [g1579, 'cfg.Name != DefaultName', 'cfg.InitialCluster == defaultInitialCluster']],
      [
        1564,
        [
          'defaultHostname == "" || defaultHostStatus != nil',
          'defaultHostname == ""',
          'defaultHostStatus != nil',
        ],
      ],
    ]);
    const s = result.sites[0]!;
    expect(s.status).toBe('off');
    expect(s.live).toBe(
      `ruled out in this run: embed/config.go:1579 \`if cfg.Name != DefaultName && cfg.InitialCluster == defaultInitialCluster {\` was false at the one stop delve made there (\`cfg.Name != DefaultName\`: true, \`cfg.InitialCluster == defaultInitialCluster\`: false)`,
    );
  });

  it('decides from the operands where delve cannot evaluate the whole (a call in it)', async () => {
    const s1585 = site('advertise-client-urls', 'embed/config.go:1585');
    const g = s1585.guards![0]!;
    expect(g.expr).toBe('cfg.defaultClientHost() && cip == "0.0.0.0"');
    const { result } = await prove('advertise-client-urls', 'https://10.0.0.1:2379', s1585, [
      { line: 1584, values: { 'cip == "0.0.0.0"': 'false' } },
    ]);
    expect(result.sites[0]!.status).toBe('off');
    const unknown = await prove('advertise-client-urls', 'https://10.0.0.1:2379', s1585, [
      { line: 1584, values: { 'cip == "0.0.0.0"': 'true' } },
    ]);
    expect(unknown.result.sites[0]!.status).toBe('not hit');
  });

  it('stays not hit when the guard let the read run once, was never reached, or stopped past the cap', async () => {
    const open = { [g1579]: 'true' };
    const shut = { [g1579]: 'false' };
    expect(
      (
        await prove('name', 'node1', name1580, [
          { line: 1579, values: shut },
          { line: 1579, values: open },
        ])
      ).result.sites[0]!.status,
    ).toBe('not hit');
    expect((await prove('name', 'node1', name1580, [])).result.sites[0]!.status).toBe('not hit');
    const many = Array.from({ length: HIT_CAP + 1 }, () => ({ line: 1579, values: shut }));
    expect((await prove('name', 'node1', name1580, many)).result.sites[0]!.status).toBe('not hit');
  });

  it("an early return's guard keeps the read out when it is true (negated), and a hit it kept out is a contradiction", async () => {
    const early = { 'defaultHostname == "" || defaultHostStatus != nil': 'true' };
    expect(
      (await prove('name', 'node1', name1580, [{ line: 1564, values: early }])).result.sites[0]!
        .status,
    ).toBe('off');
    const hit = await prove('name', 'node1', name1580, [
      { line: 1564, values: early },
      { line: 1580, values: {} },
    ]);
    expect(hit.result.sites[0]!.status).toBe('hit');
    expect(hit.result.sites[0]!.contradiction).toBe(true);
    expect(hit.result.sites[0]!.reason).toMatch(
      /^CONTRADICTION: hit, though embed\/config.go:1564/,
    );
  });

  it("one probe at a line serves reads of either sense: the if's body (config.go:1567) and past its early return (1580)", async () => {
    const s1567 = site('name', 'embed/config.go:1567');
    expect(s1567.guards!.find((g) => g.at.endsWith(':1564'))!.negated).toBeUndefined();
    const g1564 = { 'defaultHostname == "" || defaultHostStatus != nil': 'false' };
    // 1564 false: the body's read is kept out; the read past the early return ran, and is no contradiction.
    const { result, bps } = await prove(
      'name',
      'node1',
      name1580,
      [
        { line: 1564, values: g1564 },
        { line: 1579, values: { [g1579]: 'true' } },
        { line: 1580, values: {} },
      ],
      [plan('initial-cluster', 'x', s1567)],
    );
    expect(bps.filter((b) => b.line === 1564)).toHaveLength(1);
    expect([result.sites[0]!.status, result.sites[0]!.contradiction]).toEqual(['hit', undefined]);
    const plans = [plan('name', 'node1', name1580), plan('initial-cluster', 'x', s1567)];
    const d = scripted(`${s1567.module}@${s1567.version}/${s1567.file}`, [
      { line: 1564, values: g1564 },
    ]);
    const traced = await setTracepoints(
      d.client,
      plans.flatMap((p) => p.sites),
      planGuards(plans),
    );
    const out = await traceUntil(d.client, traced, () => d.gateOpen);
    const [name, cluster] = classify(plans, out.traces, () => undefined, 'the unit', out.guards);
    expect(cluster!.sites[0]!.status).toBe('off');
    expect(name!.sites[0]!.status).toBe('not hit');
  });
});
