// learn --demo --live without a cluster: which cites get a tracepoint and where at each version,
// the kubeconfig sent to the debug apiserver, and how a live cite is reported from its hits.
import { describe, expect, it } from 'vitest';
import { EXERCISES, exercise } from '../harness/learn/index.ts';
import {
  liveCites,
  liveLine,
  livePoint,
  liveResult,
  withServer,
  type LivePoint,
} from '../harness/learn/live.ts';
import { namer } from '../harness/delve/modules.ts';
import type { Cite } from '../harness/learn/types.ts';

const name = namer(new Map());

describe('learn --live', () => {
  it('marks the lines that make "too old resource version" (2.1, 3.5a, 3.5b) and a CRD\'s storage (3.4c), and no others', () => {
    expect(EXERCISES.filter((e) => liveCites([e]).length > 0).map((e) => e.id)).toEqual([
      '2.1',
      '3.4c',
      '3.5a',
      '3.5b',
    ]);
    const at = (id: string) =>
      liveCites([exercise(id)]).map((c) => `${c.site.file}:${c.site.line}`);
    expect(at('2.1')).toEqual(['pkg/storage/cacher/watch_cache.go:917']);
    expect(at('3.4c')).toEqual([
      'pkg/apiserver/customresource_handler.go:855',
      'pkg/apiserver/customresource_handler.go:513',
    ]);
    expect(at('3.5a')).toEqual(['pkg/storage/cacher/watch_cache.go:917']);
    expect(at('3.5b')).toEqual([
      'pkg/storage/etcd3/errors.go:72',
      'pkg/storage/cacher/delegator.go:190',
    ]);
  });

  it('puts the tracepoint at the line at the running version, named as the debug build names it', () => {
    const [c] = liveCites([exercise('2.1')]);
    expect(livePoint(c!, 'v1.36.3', name)).toEqual({
      ref: 'k8s.io/apiserver@v0.36.3/pkg/storage/cacher/watch_cache.go:917',
      file: 'k8s.io/apiserver@v0.36.3/pkg/storage/cacher/watch_cache.go',
      line: 917,
    });
    // v1.37 moved the window's check to watch_cache_history.go.
    expect(livePoint(c!, 'v1.37.2', name)).toMatchObject({
      file: 'k8s.io/apiserver@v0.37.2/pkg/storage/cacher/watch_cache_history.go',
      line: 237,
    });
    // delegator.go holds its text on several lines: the same one by order, the ShouldDelegate branch
    // (the nearest to the pinned line would be the Expired retry, 158).
    const sent = liveCites([exercise('3.5b')]).find((x) => x.site.file.endsWith('delegator.go'))!;
    expect(livePoint(sent, 'v1.37.2', name)).toMatchObject({
      file: 'k8s.io/apiserver@v0.37.2/pkg/storage/cacher/delegator.go',
      line: 141,
    });
    // A text that is not in the running version's source: no line, so no tracepoint, said so.
    const snap = { ...c!, holds: 'no such text in any Go file' };
    expect(livePoint(snap, 'v1.37.2', name)).toEqual({
      unset: expect.stringMatching(/not in v1\.37\.2's source/) as unknown as string,
    });
  });

  it("sends every cluster's server to the forwarded port and keeps the rest", () => {
    const k =
      'clusters:\n- cluster:\n    certificate-authority-data: QUJD\n    server: https://10.0.0.1:6443\n  name: c\n';
    expect(withServer(k, 'https://127.0.0.1:40001')).toBe(
      k.replace('https://10.0.0.1:6443', 'https://127.0.0.1:40001'),
    );
  });

  it('reports a cite seen live only with a hit at its own line, with the calling frame', () => {
    const [c] = liveCites([exercise('2.1')]);
    const p = livePoint(c!, 'v1.36.3', name) as LivePoint;
    const points = new Map<Cite, LivePoint | { unset: string }>([[c!, p]]);
    const frames = [
      {
        function: 'k8s.io/apiserver/pkg/storage/cacher.(*watchCache).getAllEventsSinceLocked',
        file: p.file,
        line: 917,
      },
      {
        function: 'k8s.io/apiserver/pkg/storage/cacher.(*watchCache).getAllEventsSince',
        file: p.file,
        line: 870,
      },
    ];
    const seen = liveResult(
      [c!],
      points,
      new Map([[`${p.file}:917`, { hits: 2, goroutine: 7, frames }]]),
    );
    expect(seen).toEqual([{ ref: p.ref, why: c!.why, seen: true, hits: 2, goroutine: 7, frames }]);
    expect(liveLine(seen[0]!)).toContain(`seen live  ${p.ref}: 2 hits, first in goroutine 7`);
    expect(liveLine(seen[0]!)).toContain(`called from ${p.file}:870 (k8s.io/apiserver`);
    // A hit one line off is another tracepoint's: not this cite's.
    const off = liveResult([c!], points, new Map([[`${p.file}:918`, { hits: 1 }]]));
    expect(off[0]).toMatchObject({ seen: false, hits: 0 });
    expect(liveLine(off[0]!)).toMatch(/^ {2}not seen .*the demo did not run it$/);
    const unset = liveResult(
      [c!],
      new Map([[c!, { unset: 'delve: could not find statement' }]]),
      new Map(),
    );
    expect(liveLine(unset[0]!)).toContain('no tracepoint (delve: could not find statement)');
  });
});
