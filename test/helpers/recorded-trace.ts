// A `trace apply` report with no lab, from the trace recorded in docs/flags.md ("All 93 stages": a
// ConfigMap through the debug kube-apiserver v1.36.3 on a 1-host lab). Its stages are turned back
// into delve stacks, files named as the debug build names them (a replaced module at its required
// v0.0.0, harness/delve/modules.ts), one stop per sink the curriculum marks, and the real
// deriveStages makes the stages again; recordedTrace() checks they are the recorded ones.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { debugBuildBinaryVersions, debugBuildReplaces } from '../../harness/delve/modules.ts';
import type { TraceReport } from '../../harness/trace/index.ts';
import {
  atCompiledVersions,
  CURRICULUM,
  deriveStages,
  type Frame,
  type Hit,
} from '../../harness/trace/stages.ts';
import { loadProven } from '../../core/flags/proven.ts';
import { repoRoot } from '../../lib/paths.ts';

const VERSION = 'v1.36.3';

interface Recorded {
  n: number;
  curriculum: string;
  short: string;
  ref: string;
  url?: string;
  goroutine: number;
}

/** The recorded table's rows (a stage outside the module cache's hosted repos has no link). */
export function recordedStages(): Recorded[] {
  const md = readFileSync(join(repoRoot, 'docs', 'flags.md'), 'utf8');
  const from = md.indexOf('<summary>All 93 stages</summary>');
  const table = md.slice(from, md.indexOf('</details>', from));
  return [
    ...table.matchAll(
      /^\| (\d+) \| (.*?) \| \*{0,2}`([^`]+)`\*{0,2} \| (?:\[([^\]]+)\]\(([^)]+)\)|(\S+)) \| (\d+) \|$/gm,
    ),
  ].map((m) => ({
    n: Number(m[1]),
    curriculum: m[2]!.replaceAll('*', ''),
    short: m[3]!,
    ref: m[4] ?? m[6]!,
    ...(m[5] ? { url: m[5] } : {}),
    goroutine: Number(m[7]),
  }));
}

/** A stage's frame as delve gives it: the full function name, the file under the binary's module version. */
function frameOf(s: Recorded, binary: Map<string, { cache: string; binary: string }>): Frame {
  const [, module, version, path, line] = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(s.ref)!;
  const pkg = `${module}/${path!}`.split('/').slice(0, -1).join('/');
  const renamed = binary.get(module!);
  return {
    function: `${pkg.slice(0, pkg.lastIndexOf('/'))}/${s.short}`,
    file: `${module}@${renamed && renamed.cache === version ? renamed.binary : version}/${path}`,
    line: Number(line),
  };
}

const SINK_OF: Record<string, Hit['sink']> = {
  'mutating admission': 'mutating-admission',
  'schema validation': 'schema-validation',
  'validating admission': 'validating-admission',
  'storage.Create': 'storage-create',
  'an etcd Txn': 'etcd-txn',
};

export function recordedTrace(): TraceReport {
  const recorded = recordedStages();
  const frames = recorded.map((s) => ({
    g: s.goroutine,
    f: frameOf(s, debugBuildBinaryVersions(VERSION)),
  }));
  // Stop k's stack is every frame up to its sink's stage: deriveStages keeps what is new below the
  // stack shared with the stop before, so the stages come out in the recorded order.
  const ends = recorded.flatMap((s, i) => (SINK_OF[s.curriculum] ? [i] : []));
  const hits: Hit[] = ends.map((end) => {
    const upTo = frames.slice(0, end + 1);
    const chain: Hit['chain'] = [];
    for (const { g, f } of upTo) {
      const last = chain.at(-1);
      if (last?.goroutine === g) last.frames.push(f);
      else chain.push({ goroutine: g, frames: [f] });
    }
    const stop = upTo.at(-1)!;
    return {
      sink: SINK_OF[recorded[end]!.curriculum]!,
      function: stop.f.function,
      goroutine: stop.g,
      ...(recorded[end]!.curriculum === 'storage.Create'
        ? { key: '/registry/configmaps/default/traced' }
        : {}),
      chain,
      raw: { stop: '', ancestors: '', stacks: [] },
    };
  });
  const stages = deriveStages(hits, debugBuildReplaces(VERSION));
  const got = stages.map((s) => [s.n, s.ref, s.url, s.goroutine, s.curriculum ?? '']);
  const want = recorded.map((s) => [s.n, s.ref, s.url, s.goroutine, s.curriculum]);
  if (JSON.stringify(got) !== JSON.stringify(want))
    throw new Error(
      `the recorded trace did not derive its own stages again: ${JSON.stringify(got.filter((g, i) => JSON.stringify(g) !== JSON.stringify(want[i])).slice(0, 3))} vs ${JSON.stringify(want.filter((w, i) => JSON.stringify(w) !== JSON.stringify(got[i])).slice(0, 3))} (${got.length} vs ${want.length})`,
    );
  const argv = loadProven('kube-apiserver', VERSION)!.argv;
  return {
    kubernetesVersion: VERSION,
    host: 'node1',
    date: '2026-12-04T10:00:00.000Z',
    object: {
      file: '/tmp/hardwire-trace/configmap.yaml',
      kind: 'ConfigMap',
      name: 'traced',
      namespace: 'default',
    },
    debugBinary: { name: 'kube-apiserver-debug', sha256: 'a'.repeat(64) },
    dlv: { version: 'v1.27.2', sha256: 'b'.repeat(64) },
    argv,
    kubectl: {
      command:
        'kubectl --server https://127.0.0.1:16443 apply -f /tmp/hardwire-trace/configmap.yaml',
      code: 0,
      output: 'configmap/traced created',
    },
    sinks: hits.map((h) => ({ id: h.sink, function: h.function })),
    // As traceApply returns them (harness/trace/index.ts): frames at the versions compiled.
    hits: atCompiledVersions(hits, debugBuildReplaces(VERSION)),
    stages,
    curriculum: CURRICULUM.map((name) => {
      const n = stages.find((s) => s.curriculum === name)?.n;
      return n === undefined ? { name } : { name, stage: n };
    }),
    seconds: { total: 60, startup: 30, traced: 10 },
  };
}
