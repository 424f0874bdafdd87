// `trace apply --capstone` without a lab: the create's hits are those on the goroutine whose etcd3
// store.Create wrote its key and on the goroutines it started (the validating dispatcher calls each
// webhook on one of its own); each webhook's call out is the frame that called rest.(*Request).Do,
// told apart by that frame's package, so another request's call out is not taken for this one's.
// The live run: the capstone case of test/learn.test.ts.
import { describe, expect, it } from 'vitest';
import { capstoneCalls, capstoneRequestHits, requireCapstone } from '../harness/trace/capstone.ts';
import { deriveStages, type Hit } from '../harness/trace/stages.ts';
import { InputError } from '../lib/errors.ts';

const A = 'k8s.io/apiserver@v0.36.3/pkg';
const X = 'k8s.io/apiextensions-apiserver@v0.36.3/pkg';
const DO = 'k8s.io/client-go/rest.(*Request).Do';
const f = (fn: string, file: string, line: number) => ({ function: fn, file, line });
const doFrame = f(DO, 'k8s.io/client-go@v0.36.3/rest/request.go', 1129);
const handler = f(
  'k8s.io/apiserver/pkg/endpoints/handlers.CreateResource.func1',
  `${A}/endpoints/handlers/create.go`,
  203,
);
const mutate = f(
  'k8s.io/apiserver/pkg/admission/plugin/webhook/mutating.(*mutatingDispatcher).callAttrMutatingHook.func2',
  `${A}/admission/plugin/webhook/mutating/dispatcher.go`,
  297,
);
const validate = f(
  'k8s.io/apiserver/pkg/admission/plugin/webhook/validating.(*validatingDispatcher).callHook.func1',
  `${A}/admission/plugin/webhook/validating/dispatcher.go`,
  298,
);
const store = f(
  'k8s.io/apiserver/pkg/storage/etcd3.(*store).Create',
  `${A}/storage/etcd3/store.go`,
  294,
);
const convert = f(
  'k8s.io/apiextensions-apiserver/pkg/apiserver/conversion.(*webhookConverter).Convert',
  `${X}/apiserver/conversion/webhook_converter.go`,
  282,
);
const hit = (sink: Hit['sink'], chain: [number, ReturnType<typeof f>[]][], key?: string): Hit => ({
  sink,
  function: chain.at(-1)![1].at(-1)!.function,
  goroutine: chain.at(-1)![0],
  ...(key ? { key } : {}),
  chain: chain.map(([goroutine, frames]) => ({ goroutine, frames })),
  raw: { stop: '', ancestors: '', stacks: [] },
});
const KEY = '/registry/capstone.learn.hardwire.dev/thermos/api-lab/traced';

// The create's finisher goroutine is 10; the validating dispatcher's is 11 (started by 10); 99 is
// another request's mutating call, on no goroutine of this create's.
const HITS: Hit[] = [
  hit('webhook-call', [[99, [handler, mutate, doFrame]]]),
  hit('webhook-call', [[10, [handler, mutate, doFrame]]]),
  hit('webhook-call', [
    [10, [handler]],
    [11, [validate, doFrame]],
  ]),
  hit('storage-create', [[10, [handler, store]]], KEY),
  hit('webhook-call', [[10, [handler, store, convert, doFrame]]]),
];

describe('trace apply --capstone: the create through three webhooks, from the stacks', () => {
  it("keeps the create's goroutine and those it started, not another request's", () => {
    const own = capstoneRequestHits(HITS, 'traced', 'api-lab');
    expect(own.map((h) => h.chain.map((c) => c.goroutine).join('>'))).toEqual([
      '10',
      '10>11',
      '10',
      '10',
    ]);
  });

  it('names each call out by the package of the frame that called Do, in order', () => {
    const own = capstoneRequestHits(HITS, 'traced', 'api-lab');
    const calls = capstoneCalls(own, deriveStages(own));
    expect(calls.map((c) => [c.role, c.callOut.ref])).toEqual([
      [
        'mutating',
        `${A.replace('/pkg', '')}/pkg/admission/plugin/webhook/mutating/dispatcher.go:297`,
      ],
      [
        'validating',
        `${A.replace('/pkg', '')}/pkg/admission/plugin/webhook/validating/dispatcher.go:298`,
      ],
      ['conversion', `${X}/apiserver/conversion/webhook_converter.go:282`],
    ]);
  });

  it('says which webhook the create never called', () => {
    const own = capstoneRequestHits(HITS, 'traced', 'api-lab').filter(
      (h) => !h.chain.some((c) => c.goroutine === 11),
    );
    expect(() => capstoneCalls(own, deriveStages(own))).toThrow(
      /did not call the validating webhook/,
    );
  });

  it('refuses an object that would not need the conversion webhook, naming -f', () => {
    const thermo = { file: 't.yaml', kind: 'Thermo', name: 't', namespace: 'api-lab' };
    expect(() =>
      requireCapstone({ ...thermo, apiVersion: 'capstone.learn.hardwire.dev/v1' }),
    ).toThrow(InputError);
    expect(() =>
      requireCapstone({
        ...thermo,
        apiVersion: 'capstone.learn.hardwire.dev/v2',
        namespace: 'default',
      }),
    ).toThrow(/namespace api-lab/);
    expect(() =>
      requireCapstone({ ...thermo, apiVersion: 'capstone.learn.hardwire.dev/v2' }),
    ).not.toThrow();
  });
});
