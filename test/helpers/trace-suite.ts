// `hardwire trace apply` on the wired lab of test/flags-prove.test.ts (no lab of its own). The
// evidence is read independently of the trace's derivation: each stage's file:line re-opened in the
// module cache inside the function delve named; the stages checked against delve's own replies
// (kept verbatim in the report and parsed here); the object read back from the cluster through
// the unit's apiserver, which must still be ready.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hardwire } from './cli.ts';
import { expectDebugApiserverGone, type WiredLab } from './lab.ts';
import { withPage } from './chromium.ts';
import { kubectlPath } from '../../core/components/binaries/cache.ts';
import { loadInventory } from '../../core/inventory/load.ts';
import { enclosingFunc, shortFunc, sourceLines } from '../../harness/prove/source.ts';
import type { TraceReport } from '../../harness/trace/index.ts';
import { repoRoot } from '../../lib/paths.ts';

const TRACE_MS = 1_800_000; // includes a cold debug build of kube-apiserver (README figures)
const NS = 'hardwire-trace-test';
const USER = 'hardwire-trace-user';

interface Frame {
  function: string;
  ref: string;
  goroutine: number;
}

/** A hit's frames in Go modules, outermost first, read from delve's replies as it sent them. */
export function rawFrames(hit: TraceReport['hits'][number]): Frame[] {
  const anc =
    (JSON.parse(hit.raw.ancestors) as { result: { Ancestors: { ID: number }[] | null } }).result
      .Ancestors ?? [];
  // The stacks are this goroutine's, then its ancestors' nearest first: the same ids, in that order.
  expect(hit.raw.stacks.map((s) => s.goroutine)).toEqual([
    hit.goroutine,
    ...anc.slice(0, hit.raw.stacks.length - 1).map((a) => a.ID),
  ]);
  return [...hit.raw.stacks].reverse().flatMap((s) => {
    const locs = (
      JSON.parse(s.reply) as {
        result: { Locations: { file: string; line: number; function?: { name: string } }[] };
      }
    ).result.Locations;
    return [...locs]
      .reverse()
      .filter((l) => /^.+?@v[^/]+\//.test(l.file))
      .map((l) => ({
        function: l.function?.name ?? '',
        ref: `${l.file}:${l.line}`,
        goroutine: s.goroutine,
      }));
  });
}

/** A stage's file:line as delve named it: at delveVersion when the build replaced its module. */
export const delveRef = (s: { ref: string; delveVersion?: string }): string =>
  s.delveVersion ? s.ref.replace(/@v[^/]+\//, `@${s.delveVersion}/`) : s.ref;

/** Each stage's file:line, at v1.36.3 in the module cache, lies in the function delve reported. */
export function stagesInDelveFunctions(r: TraceReport): void {
  expect(r.stages.length).toBeGreaterThan(20);
  for (const st of r.stages) {
    const [, module, version, file, line] = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(st.ref)!;
    if (
      module!.startsWith('k8s.io/') &&
      module !== 'k8s.io/utils' &&
      module !== 'k8s.io/kube-openapi' &&
      module !== 'k8s.io/klog/v2'
    ) {
      expect(version, st.ref).toBe(module === 'k8s.io/kubernetes' ? 'v1.36.3' : 'v0.36.3');
    }
    const lines = sourceLines(module!, version!, file!);
    expect(lines, `${st.ref} in the module cache`).toBeDefined();
    expect(enclosingFunc(lines!, Number(line)), st.ref).toBe(shortFunc(st.function));
  }
}

/** The stages are the module frames of delve's stacks at the stops (its verbatim replies), none dropped, in the stacks' order. */
export function stagesAreDelveFrames(r: TraceReport): void {
  const key = (f: { function: string; ref: string; goroutine: number }) =>
    `${f.goroutine} ${f.function} ${f.ref}`;
  // A stage names delve's file by the version the build compiled when go.mod replaced it
  // (k8s.io/kube-aggregator v0.0.0 => v0.36.3): the replace line is read here from go.mod.
  const goMod = readFileSync(
    join(repoRoot, 'core', 'components', 'go', 'kubernetes', 'go.mod'),
    'utf8',
  );
  for (const st of r.stages.filter((x) => x.delveVersion)) {
    const [, module, version] = /^(.+?)@(v[^/]+)\//.exec(st.ref)!;
    expect(goMod, st.ref).toMatch(
      new RegExp(
        `^\\s*${module!.replace(/\./g, '\\.')} => ${module!.replace(/\./g, '\\.')} ${version!.replace(/\./g, '\\.')}$`,
        'm',
      ),
    );
    expect(delveRef(st).replace(/@v[^/]+\//, `@${version}/`), st.ref).toBe(st.ref);
  }
  const staged = new Set(r.stages.map((s) => key({ ...s, ref: delveRef(s) })));
  let last = 0;
  r.hits.forEach((hit, i) => {
    // The stop delve reported: this goroutine, stopped in the sink's function, which is its innermost frame.
    const stop = (
      JSON.parse(hit.raw.stop) as {
        result: {
          State: {
            Threads: {
              goroutineID: number;
              function?: { name: string };
              breakPoint?: { id: number };
            }[];
          };
        };
      }
    ).result.State;
    const th = stop.Threads.find((t) => t.goroutineID === hit.goroutine && t.breakPoint);
    expect(th?.function?.name, `stop ${i}`).toBe(hit.function);
    const frames = rawFrames(hit);
    expect(frames.at(-1)?.function).toBe(hit.function);
    for (const f of frames)
      expect(staged.has(key(f)), `stop ${i}: frame ${key(f)} is no stage`).toBe(true);
    // This stop's stages, in stage order, are the innermost frames of its stack in the stack's
    // order (outermost first): those below what it shares with the stop before; all at the first.
    const mine = r.stages.filter((s) => s.hit === i).map((s) => key({ ...s, ref: delveRef(s) }));
    expect(mine, `stop ${i}`).toEqual(frames.slice(frames.length - mine.length).map(key));
    if (i === 0) expect(mine.length).toBe(frames.length);
    const ns = r.stages.filter((s) => s.hit === i).map((s) => s.n);
    if (ns.length) {
      expect(ns[0]).toBeGreaterThan(last);
      last = ns.at(-1)!;
    }
  });
}

/** The pinned kubectl as the lab's admin, through the unit's apiserver (the kubeconfig's server). */
export function labKubectl(lab: () => WiredLab): (args: string[]) => string {
  return (args) => {
    const w = lab();
    const admin = join(w.state, loadInventory(w.inv).cluster.name, 'kubeconfigs', 'admin.conf');
    return execFileSync(kubectlPath(), ['--kubeconfig', admin, ...args], {
      encoding: 'utf8',
      timeout: 60_000,
    }).trim();
  };
}

export function traceSuite(lab: () => WiredLab): void {
  describe('hardwire trace apply: one kubectl apply, stage by stage, from the live stacks', () => {
    let r: TraceReport;
    let md: string;
    let html: string;
    const kubectl = labKubectl(lab);

    it(
      'traces a create through a debug apiserver beside the unit; the object exists, the unit still serves',
      async () => {
        const w = lab();
        kubectl(['create', 'namespace', NS]);
        const file = join(w.lab.stateDir, 'trace-object.yaml');
        writeFileSync(
          file,
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: traced\n  namespace: ${NS}\ndata:\n  stage: one\n`,
        );
        md = join(w.lab.stateDir, 'trace.md');
        html = join(w.lab.stateDir, 'trace.html');
        const out = hardwire(
          [
            'trace',
            'apply',
            '-f',
            file,
            '--authz-user',
            USER,
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
          throw new Error(`trace apply exited ${out.code}: ${out.stderr.slice(-3000)}`);
        r = JSON.parse(out.stdout) as TraceReport;
        console.log(
          `trace apply: ${r.stages.length} stages, ${r.hits.length} stops, traced ${r.seconds.traced.toFixed(0)} s, debug apiserver start ${r.seconds.startup.toFixed(0)} s, in all ${r.seconds.total.toFixed(0)} s`,
        );
        expect(r.kubectl.output).toMatch(/configmap\/traced created/);
        // Read back through the unit's apiserver (the kubeconfig's server, port 6443), which kept serving.
        expect(
          kubectl(['get', 'configmap', 'traced', '-n', NS, '-o', 'jsonpath={.data.stage}']),
        ).toBe('one');
        expect(kubectl(['get', '--raw', '/readyz'])).toBe('ok');
        await expectDebugApiserverGone(w.lab, w.lab.info.hosts[0]!.name);
      },
      TRACE_MS,
    );

    it("each stage's file:line, at v1.36.3 in the module cache, lies in the function delve reported", () => {
      stagesInDelveFunctions(r);
    });

    it("the stages are the module frames of delve's stacks at the stops, none dropped, in the stacks' order", () => {
      stagesAreDelveFrames(r);
    });

    it('names where authorization rejected the unbound create, from the live stack; bound, the apply got through', () => {
      const a = r.authz!;
      expect(a.rejected.code).not.toBe(0);
      expect(a.rejected.output).toMatch(
        new RegExp(`User "${USER}" cannot create resource "configmaps"`),
      );
      expect(r.kubectl.command).toContain(`--as ${USER} apply`);
      // delve stopped that goroutine in Forbidden (its verbatim replies); the frame above is the point.
      const frames = rawFrames(a.hit);
      expect(frames.at(-1)!.function).toBe(
        'k8s.io/apiserver/pkg/endpoints/handlers/responsewriters.Forbidden',
      );
      expect(frames.at(-2)!.ref).toBe(delveRef(a.point));
      // Read back from the module cache: the line answers Forbidden, in the authorization filter.
      const [, module, version, file, line] = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(a.point.ref)!;
      const lines = sourceLines(module!, version!, file!)!;
      expect(lines[Number(line) - 1], a.point.ref).toMatch(/responsewriters\.Forbidden\(/);
      expect(enclosingFunc(lines, Number(line))).toBe('withAuthorization');
      // Nothing past authorization ran for it: no admission, registry or storage frame.
      expect(frames.filter((f) => /admission|registry|storage|etcd/.test(f.function))).toEqual([]);
      // The Role and RoleBinding it made are gone.
      expect(kubectl(['get', 'role,rolebinding', '-n', NS, '-o', 'name'])).toBe('');
    });

    it("marks the curriculum's nine in order, and shows the filters it omits", () => {
      const n = r.curriculum.map((c) => c.stage);
      expect(
        n.every((x) => x !== undefined),
        JSON.stringify(r.curriculum),
      ).toBe(true);
      expect(n).toEqual([...n].sort((a, b) => a! - b!));
      const at = (name: string) => r.stages.find((s) => s.curriculum === name)!;
      for (const f of ['requestinfo.go', 'authentication.go', 'authorization.go'])
        expect(at(f).ref).toMatch(
          new RegExp(`/pkg/endpoints/filters/${f.replace('.', '\\.')}:\\d+$`),
        );
      expect(at('an etcd Txn').function).toMatch(/etcdserverpb\.\(\*kVClient\)\.Txn$/);
      expect(at('storage.Create').ref).toMatch(
        /^k8s\.io\/apiserver@v0\.36\.3\/pkg\/storage\/etcd3\/store\.go:\d+$/,
      );
      const filters = new Set(
        r.stages
          .map((s) => s.ref.replace(/:\d+$/, ''))
          .filter((f) => /\/pkg\/(endpoints|server)\/filters\//.test(f)),
      );
      expect(filters.size, [...filters].join('\n')).toBeGreaterThan(3);
    });

    it('the Markdown and the HTML (in Chromium) link every stage to its line at the tag', async () => {
      const text = readFileSync(md, 'utf8');
      const url = (ref: string) => {
        const [, module, version, file, line] = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(ref)!;
        if (module === 'k8s.io/kubernetes')
          return `https://github.com/kubernetes/kubernetes/blob/${version}/${file}#L${line}`;
        return module!.startsWith('k8s.io/') && version === 'v0.36.3'
          ? `https://github.com/kubernetes/kubernetes/blob/v1.36.3/staging/src/${module}/${file}#L${line}`
          : undefined;
      };
      for (const s of r.stages)
        if (url(s.ref)) expect(text, s.ref).toContain(`[${s.ref}](${url(s.ref)})`);
      for (const c of r.curriculum) expect(text).toContain(`**${c.name}**`);
      await withPage(html, async (page, requests) => {
        const rows = await page.$$eval('#stages tbody tr', (trs) =>
          trs.map((tr) => ({
            ref: tr.getAttribute('data-ref'),
            href: tr.querySelector('td.cite a')?.getAttribute('href') ?? null,
            mark: tr.querySelector('td.mark')!.textContent,
          })),
        );
        expect(rows.map((x) => x.ref)).toEqual(r.stages.map((s) => s.ref));
        for (const x of rows) if (url(x.ref!)) expect(x.href, x.ref!).toBe(url(x.ref!));
        expect(rows.filter((x) => x.mark).map((x) => x.mark)).toEqual(
          r.curriculum.map((c) => c.name),
        );
        expect(await page.$eval('#authz a', (a) => a.getAttribute('href'))).toBe(
          url(r.authz!.point.ref),
        );
        expect(requests).toEqual([]);
      });
    });
  });
}
