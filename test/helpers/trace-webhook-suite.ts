// `hardwire trace apply --webhook-reject` on the wired lab of test/flags-prove.test.ts (after the
// plain trace, on the same lab). The evidence is read independently of the trace: the webhook
// server's own journal on the host (it was called, and denied this object), kubectl's answer (the
// webhook's message), the object absent through the unit's apiserver, and delve's verbatim stacks:
// where admission called out, where the answer came back and where it became the rejection, each
// re-opened in the module cache.
import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hardwire } from './cli.ts';
import { remote, type WiredLab } from './lab.ts';
import { withPage } from './chromium.ts';
import { enclosingFunc, sourceLines } from '../../harness/prove/source.ts';
import type { TraceReport } from '../../harness/trace/index.ts';
import {
  delveRef,
  labKubectl,
  rawFrames,
  stagesAreDelveFrames,
  stagesInDelveFunctions,
} from './trace-suite.ts';

const TRACE_MS = 1_800_000;
const NAME = 'hardwire-trace-rejected';
/** What hardwire's webhook answers (core/components/go/webhook/main.go), as the apiserver wraps it (webhook errors.ToStatusErr). */
const MESSAGE =
  'admission webhook "trace-reject.hardwire.dev" denied the request: hardwire stage-2 webhook: key forbidden is not allowed';
const CALLHOOK = '(*validatingDispatcher).callHook';

/** The three points: the sink delve stopped in, and what the calling line must hold, read back from the module cache. */
const POINTS = [
  ['callOut', 'webhook-call', 'k8s.io/client-go/rest.(*Request).Do', /\br\.Do\(ctx\)/],
  [
    'answer',
    'webhook-answer',
    'k8s.io/apiserver/pkg/admission/plugin/webhook/request.VerifyAdmissionResponse',
    /webhookrequest\.VerifyAdmissionResponse\(/,
  ],
  [
    'rejection',
    'webhook-rejection',
    'k8s.io/apiserver/pkg/admission/plugin/webhook/errors.ToStatusErr',
    /webhookerrors\.ToStatusErr\(/,
  ],
] as const;

const upstream = (ref: string) => {
  const [, module, version, file, line] = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(ref)!;
  return module!.startsWith('k8s.io/') && version === 'v0.36.3'
    ? `https://github.com/kubernetes/kubernetes/blob/v1.36.3/staging/src/${module}/${file}#L${line}`
    : undefined;
};

export function traceWebhookSuite(lab: () => WiredLab): void {
  describe('hardwire trace apply --webhook-reject: a create a validating webhook rejects', () => {
    let r: TraceReport;
    let md: string;
    let html: string;
    const kubectl = labKubectl(lab);

    it(
      'the webhook on the host saw the create and denied it, kubectl got its message, nothing was written; all removed afterwards',
      async () => {
        const w = lab();
        const file = join(w.lab.stateDir, 'trace-rejected.yaml');
        writeFileSync(
          file,
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${NAME}\n  namespace: default\ndata:\n  forbidden: "yes"\n`,
        );
        md = join(w.lab.stateDir, 'trace-webhook.md');
        html = join(w.lab.stateDir, 'trace-webhook.html');
        const s = await w.lab.ssh(w.lab.info.hosts[0]!.name);
        try {
          const since = await remote(s, ['date', '+%s']);
          const out = hardwire(
            [
              'trace',
              'apply',
              '-f',
              file,
              '--webhook-reject',
              '--md',
              md,
              '--html',
              html,
              '--inventory',
              w.inv,
              '--state-dir',
              w.state,
              '--json',
            ],
            { timeoutMs: TRACE_MS },
          );
          if (out.code !== 0)
            throw new Error(
              `trace apply --webhook-reject exited ${out.code}: ${out.stderr.slice(-3000)}`,
            );
          r = JSON.parse(out.stdout) as TraceReport;
          console.log(
            `trace apply --webhook-reject: ${r.stages.length} stages, ${r.hits.length} stops, traced ${r.seconds.traced.toFixed(0)} s, debug apiserver start ${r.seconds.startup.toFixed(0)} s, in all ${r.seconds.total.toFixed(0)} s`,
          );
          expect(r.kubectl.code).not.toBe(0);
          expect(r.kubectl.output).toContain(MESSAGE);
          // The server's own journal, read here: one review of this create, denied.
          const journal = await remote(s, [
            'journalctl',
            '-u',
            'hardwire-trace-webhook.service',
            '--since',
            `@${since}`,
            '-o',
            'cat',
            '--no-pager',
          ]);
          const reviews = journal.split('\n').filter((l) => / review uid=/.test(l));
          expect(reviews, journal).toEqual([
            expect.stringMatching(
              new RegExp(
                ` review uid=[0-9a-f-]{36} CREATE ConfigMap default/${NAME} allowed=false$`,
              ),
            ),
          ]);
          expect(
            r
              .webhook!.serverLog.filter((l) => / review uid=/.test(l))
              .map((l) => l.replace(/^\S+ \S+ /, '')),
          ).toEqual(reviews.map((l) => l.replace(/^\S+ \S+ /, '')));
          // Nothing written; the webhook, its unit, its files and its configuration are gone; the unit's apiserver serves.
          expect(
            kubectl([
              'get',
              'configmap',
              NAME,
              '-n',
              'default',
              '--ignore-not-found',
              '-o',
              'name',
            ]),
          ).toBe('');
          expect(kubectl(['get', 'validatingwebhookconfigurations', '-o', 'name'])).toBe('');
          expect(kubectl(['get', '--raw', '/readyz'])).toBe('ok');
          expect(await remote(s, ['systemctl', 'is-active', 'kube-apiserver.service'])).toBe(
            'active',
          );
          expect(
            await remote(s, [
              'sh',
              '-c',
              'systemctl is-active hardwire-trace-webhook.service hardwire-trace-kube-apiserver.service || true',
            ]),
          ).not.toMatch(/^active/m);
          expect(
            await remote(s, [
              'sh',
              '-c',
              'ls -d /var/tmp/hardwire-trace* /run/hardwire-trace* 2>/dev/null || true',
            ]),
          ).toBe('');
        } finally {
          await s.close();
        }
      },
      TRACE_MS,
    );

    it("from delve's stacks: admission called out in callHook, and the answer came back and became the rejection there, on one goroutine", () => {
      const w = r.webhook!;
      const goroutines = new Set<number>();
      for (const [point, sink, fn, text] of POINTS) {
        const hit = r.hits.find((h) => h.sink === sink)!;
        expect(hit, sink).toBeDefined();
        goroutines.add(hit.goroutine);
        const frames = rawFrames(hit);
        expect(frames.at(-1)!.function, sink).toBe(fn);
        const at = w[point];
        expect(frames.at(-2)!.ref, point).toBe(delveRef(at));
        const [, module, version, file, line] = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(at.ref)!;
        const lines = sourceLines(module!, version!, file!)!;
        expect(lines[Number(line) - 1], at.ref).toMatch(text);
        expect(enclosingFunc(lines, Number(line)), at.ref).toBe(CALLHOOK);
        // The call goes out from the validating admission plugin's dispatch (the goroutine that started this one).
        expect(
          frames.map((f) => f.function),
          point,
        ).toEqual(
          expect.arrayContaining([
            'k8s.io/apiserver/pkg/admission/plugin/webhook/validating.(*Plugin).Validate',
            'k8s.io/apiserver/pkg/admission/plugin/webhook/validating.(*validatingDispatcher).Dispatch',
          ]),
        );
      }
      expect(goroutines.size).toBe(1);
      expect(w.callOut.n).toBeLessThan(w.answer.n);
      expect(w.answer.n).toBeLessThan(w.rejection.n);
      const seen = new Map(r.curriculum.map((c) => [c.name, c.stage]));
      expect(seen.get('validating admission')).toBeLessThan(w.callOut.n);
      // Rejected before storage: no store.Create, no Txn.
      expect(seen.get('storage.Create')).toBeUndefined();
      expect(seen.get('an etcd Txn')).toBeUndefined();
      expect(
        r.stages.filter((s) => /etcd3|etcdserverpb/.test(s.function)).map((s) => s.ref),
      ).toEqual([]);
    });

    it("each stage lies in the function delve named, and the stages are delve's frames, none dropped, in order", () => {
      stagesInDelveFunctions(r);
      stagesAreDelveFrames(r);
    });

    it('the Markdown and the HTML (in Chromium) link the three points to their lines at the tag', async () => {
      const text = readFileSync(md, 'utf8');
      expect(text).toContain(MESSAGE);
      for (const [point] of POINTS)
        expect(text).toContain(`[${r.webhook![point].ref}](${upstream(r.webhook![point].ref)})`);
      await withPage(html, async (page, requests) => {
        const links = await page.$$eval('#webhook-points li', (lis) =>
          lis.map((li) => ({
            point: li.getAttribute('data-point'),
            href: li.querySelector('a')?.getAttribute('href') ?? null,
          })),
        );
        expect(links).toEqual(
          POINTS.map(([point]) => ({ point, href: upstream(r.webhook![point].ref) })),
        );
        expect(requests).toEqual([]);
      });
    });
  });
}
