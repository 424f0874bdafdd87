// How `trace apply` turns delve's stacks into stages, on two hand-made stops of one request: a
// frame shared with the previous stop is not repeated, a frame at a new line of the same function
// is a new stage, standard-library frames are left out, and the curriculum's stages are marked
// only in order. The live run is checked in test/helpers/trace-suite.ts.
import { describe, expect, it } from 'vitest';
import { deriveStages, requestHits, sourceUrl, type Hit } from '../harness/trace/stages.ts';

const A = 'k8s.io/apiserver@v0.36.3/pkg';
const f = (fn: string, file: string, line: number) => ({ function: fn, file, line });
const outer = [
  f('net/http.(*conn).serve', 'net/http/server.go', 2100),
  f('k8s.io/apiserver/pkg/server.(*APIServerHandler).ServeHTTP', `${A}/server/handler.go`, 189),
  f(
    'k8s.io/apiserver/pkg/endpoints/filters.WithRequestInfo.func1',
    `${A}/endpoints/filters/requestinfo.go`,
    39,
  ),
];
const hit = (
  sink: Hit['sink'],
  fn: string,
  g: number,
  frames: ReturnType<typeof f>[],
  key?: string,
): Hit => ({
  sink,
  function: fn,
  goroutine: g,
  ...(key ? { key } : {}),
  chain: [
    { goroutine: 1, frames: outer },
    { goroutine: g, frames },
  ],
  raw: { stop: '', ancestors: '', stacks: [] },
});
const store = (line: number) =>
  f(
    'k8s.io/apiserver/pkg/registry/generic/registry.(*Store).Create',
    `${A}/registry/generic/registry/store.go`,
    line,
  );
const create = f(
  'k8s.io/apiserver/pkg/storage/etcd3.(*store).Create',
  `${A}/storage/etcd3/store.go`,
  274,
);
const txn = f(
  'go.etcd.io/etcd/api/v3/etcdserverpb.(*kVClient).Txn',
  'go.etcd.io/etcd/api/v3@v3.6.8/etcdserverpb/rpc.pb.go',
  6677,
);

describe('trace stages from stacks', () => {
  const hits = [
    hit(
      'storage-create',
      create.function,
      7,
      [store(520), create],
      '/registry/configmaps/ns/traced',
    ),
    hit('etcd-txn', txn.function, 7, [
      store(530),
      f('k8s.io/apiserver/pkg/storage/etcd3.(*store).Create', `${A}/storage/etcd3/store.go`, 317),
      txn,
    ]),
    hit(
      'storage-create',
      create.function,
      9,
      [store(520), create],
      '/registry/leases/kube-system/other',
    ),
  ];

  it('keeps only the request whose create wrote its key', () => {
    expect(requestHits(hits, 'traced', 'ns').map((h) => h.goroutine)).toEqual([7, 7]);
    expect(requestHits(hits, 'traced', 'other-ns')).toEqual([]);
  });

  it('lists module frames outermost first, new frames only, and marks the curriculum in order', () => {
    const s = deriveStages(requestHits(hits, 'traced', 'ns'));
    expect(s.map((x) => x.ref)).toEqual([
      `${A}/server/handler.go:189`,
      `${A}/endpoints/filters/requestinfo.go:39`,
      `${A}/registry/generic/registry/store.go:520`,
      `${A}/storage/etcd3/store.go:274`,
      `${A}/registry/generic/registry/store.go:530`,
      `${A}/storage/etcd3/store.go:317`,
      'go.etcd.io/etcd/api/v3@v3.6.8/etcdserverpb/rpc.pb.go:6677',
    ]);
    expect(s.map((x) => x.hit)).toEqual([0, 0, 0, 0, 1, 1, 1]);
    expect(s.filter((x) => x.curriculum).map((x) => `${x.n} ${x.curriculum}`)).toEqual([
      '1 URL',
      '2 requestinfo.go',
      '4 storage.Create',
      '7 an etcd Txn',
    ]);
  });

  it('links staging modules under kubernetes/kubernetes at the tag, etcd under etcd-io/etcd', () => {
    expect(sourceUrl('k8s.io/apiserver', 'v0.36.3', 'pkg/server/handler.go', 189)).toBe(
      'https://github.com/kubernetes/kubernetes/blob/v1.36.3/staging/src/k8s.io/apiserver/pkg/server/handler.go#L189',
    );
    expect(
      sourceUrl('k8s.io/kubernetes', 'v1.36.3', 'pkg/registry/core/configmap/strategy.go', 61),
    ).toBe(
      'https://github.com/kubernetes/kubernetes/blob/v1.36.3/pkg/registry/core/configmap/strategy.go#L61',
    );
    expect(sourceUrl('go.etcd.io/etcd/api/v3', 'v3.6.8', 'etcdserverpb/rpc.pb.go', 6677)).toBe(
      'https://github.com/etcd-io/etcd/blob/v3.6.8/api/etcdserverpb/rpc.pb.go#L6677',
    );
    expect(sourceUrl('github.com/emicklei/go-restful/v3', 'v3.12.2', 'container.go', 299)).toBe(
      'https://github.com/emicklei/go-restful/blob/v3.12.2/container.go#L299',
    );
  });
});
