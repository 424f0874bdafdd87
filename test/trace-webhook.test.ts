// `trace apply --webhook-reject` without a lab: the webhook configuration sends the traced object's
// create alone to the webhook and fails closed; the rejected request's hits are those on the
// goroutines of the stop at ToStatusErr; each point is the frame that called its sink; an object
// the webhook would admit is refused as bad input. The live run: test/helpers/trace-webhook-suite.ts.
import { describe, expect, it } from 'vitest';
import { deriveStages, type Hit } from '../harness/trace/stages.ts';
import {
  requireDenied,
  webhookConfiguration,
  webhookPoints,
  webhookRequestHits,
  WEBHOOK_SINKS,
} from '../harness/trace/webhook.ts';

const A = 'k8s.io/apiserver@v0.36.3/pkg';
const C = 'k8s.io/client-go@v0.36.3';
const D = 'k8s.io/apiserver/pkg/admission/plugin/webhook/validating.(*validatingDispatcher)';
const f = (fn: string, file: string, line: number) => ({ function: fn, file, line });
const fin = [
  f(
    'k8s.io/apiserver/pkg/admission/plugin/webhook/validating.(*Plugin).Validate',
    `${A}/admission/plugin/webhook/validating/plugin.go`,
    83,
  ),
  f(`${D}.Dispatch`, `${A}/admission/plugin/webhook/validating/dispatcher.go`, 229),
];
const hook = (...inner: ReturnType<typeof f>[]) => [
  f(`${D}.Dispatch.func2`, `${A}/admission/plugin/webhook/validating/dispatcher.go`, 170),
  ...inner,
];
const sinkFn = (id: string) => WEBHOOK_SINKS.find((s) => s.id === id)!.function;
const hit = (sink: Hit['sink'], g: number, chain: [number, ReturnType<typeof f>[]][]): Hit => ({
  sink,
  function: chain.at(-1)![1].at(-1)!.function,
  goroutine: g,
  chain: chain.map(([goroutine, frames]) => ({ goroutine, frames })),
  raw: { stop: '', ancestors: '', stacks: [] },
});
const dispatcher = (line: number, fn = `${D}.callHook`) =>
  f(fn, `${A}/admission/plugin/webhook/validating/dispatcher.go`, line);

const hits = [
  hit('validating-admission', 5, [[5, fin.slice(0, 1)]]),
  // Another goroutine's Do, at the same moment: not this request's.
  hit('webhook-call', 40, [
    [
      40,
      [
        f('k8s.io/x.run', 'k8s.io/x@v0.36.3/run.go', 3),
        f(sinkFn('webhook-call'), `${C}/rest/request.go`, 1100),
      ],
    ],
  ]),
  hit('webhook-call', 6, [
    [5, fin],
    [
      6,
      hook(
        dispatcher(296),
        dispatcher(298, `${D}.callHook.func1`),
        f(sinkFn('webhook-call'), `${C}/rest/request.go`, 1100),
      ),
    ],
  ]),
  hit('webhook-answer', 6, [
    [5, fin],
    [
      6,
      hook(
        dispatcher(314),
        f(
          sinkFn('webhook-answer'),
          `${A}/admission/plugin/webhook/request/admissionreview.go`,
          150,
        ),
      ),
    ],
  ]),
  hit('webhook-rejection', 6, [
    [5, fin],
    [
      6,
      hook(
        dispatcher(332),
        f(sinkFn('webhook-rejection'), `${A}/admission/plugin/webhook/errors/statuserror.go`, 29),
      ),
    ],
  ]),
];

describe('trace apply --webhook-reject', () => {
  it('keeps the hits on the rejecting goroutine and the goroutines that started it', () => {
    expect(webhookRequestHits(hits).map((h) => `${h.sink} ${h.goroutine}`)).toEqual([
      'validating-admission 5',
      'webhook-call 6',
      'webhook-answer 6',
      'webhook-rejection 6',
    ]);
    expect(webhookRequestHits(hits.filter((h) => h.sink !== 'webhook-rejection'))).toEqual([]);
  });

  it('names the frame that called each sink: the call out, the answer, the rejection', () => {
    const mine = webhookRequestHits(hits);
    const stages = deriveStages(mine);
    const p = webhookPoints(mine, stages);
    expect(
      [p.callOut, p.answer, p.rejection].map(
        (s) => `${s.function.replace(/^.*\)\./, '')} ${s.ref.replace(/^.*\//, '')}`,
      ),
    ).toEqual([
      'callHook.func1 dispatcher.go:298',
      'callHook dispatcher.go:314',
      'callHook dispatcher.go:332',
    ]);
    expect(p.callOut.n).toBeLessThan(p.answer.n);
    expect(p.answer.n).toBeLessThan(p.rejection.n);
    // Without the stop at Do on that goroutine, there is no call-out to name.
    const noCall = mine.filter((h) => h.sink !== 'webhook-call');
    expect(() => webhookPoints(noCall, deriveStages(noCall))).toThrow(/rest\.\(\*Request\)\.Do/);
  });

  it("the configuration matches the traced object alone, fails closed, and trusts the run's CA", () => {
    const c = webhookConfiguration(
      { file: 'x.yaml', kind: 'ConfigMap', name: 'traced', namespace: 'ns' },
      'https://127.0.0.1:16444/validate',
      'PEM',
    ) as {
      webhooks: {
        clientConfig: { url: string; caBundle: string };
        matchConditions: { expression: string }[];
        failurePolicy: string;
        rules: { operations: string[]; resources: string[] }[];
      }[];
    };
    const w = c.webhooks[0]!;
    expect(w.matchConditions.map((m) => m.expression)).toEqual([
      'request.namespace == "ns" && object.metadata.name == "traced"',
    ]);
    expect(w.failurePolicy).toBe('Fail');
    expect(w.rules).toEqual([
      expect.objectContaining({ operations: ['CREATE'], resources: ['configmaps'] }),
    ]);
    expect(Buffer.from(w.clientConfig.caBundle, 'base64').toString()).toBe('PEM');
  });

  it('refuses an object the webhook would admit, naming -f and the fix', () => {
    expect(() => requireDenied({ file: 's.yaml', kind: 'Secret', name: 'a' })).toThrow(
      /-f: .*ConfigMap with a data key "forbidden"/,
    );
    expect(() =>
      requireDenied({ file: 'c.yaml', kind: 'ConfigMap', name: 'a', dataKeys: ['a'] }),
    ).toThrow(/without it/);
    expect(() =>
      requireDenied({ file: 'c.yaml', kind: 'ConfigMap', name: 'a', dataKeys: ['forbidden'] }),
    ).not.toThrow();
  });
});
