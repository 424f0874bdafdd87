// `hardwire learn` on a workers lab (issue 44). The test is the learner first: it types the task
// list's commands itself (its own bash, the pinned kubectl on PATH, curl through kubectl proxy), and
// reads each "Verify" from the cluster and the output itself. Then learn's own --check and --demo
// are run against that: every --check fails before anything was done, passes after, and every
// --demo runs again and passes. Last, containerd's journal on every host: no pull left the lab.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { expectDebugApiserverGone, remote, wiredTestLab, type WiredLab } from './helpers/lab.ts';
import { hardwire } from './helpers/cli.ts';
import { credsFromKubeconfig, kubeJson, type KubeCreds } from '../core/transport/kube-api.ts';
import { binaryPath } from '../core/components/binaries/cache.ts';
import { PINNED_KUBERNETES } from '../lib/constants.ts';
import { run } from '../lib/proc.ts';
import { repoRoot } from '../lib/paths.ts';
import { loadInventory } from '../core/inventory/load.ts';
import { hardwireShim } from '../harness/learn/env.ts';
import { TASKS } from '../harness/learn/tasks.ts';
import { EDGE } from '../harness/learn/edge.ts';
import { EXERCISES, exercise } from '../harness/learn/index.ts';
import { CAPSTONE_GROUP, MUTATED_LABEL } from '../harness/trace/capstone.ts';

const NAME = 'hwtest-learn';
const HOSTS = ['node1', 'node2'];
const NS = '/api/v1/namespaces/api-lab';
/** What the test types itself: the task list and its edge cases. */
const TYPED = [...TASKS, ...EDGE];

describe('hardwire learn: the task list as written, on a workers lab (issue 44)', () => {
  let w: WiredLab;
  let kc: string;
  let admin: KubeCreds;
  /** The lab's inventory with the metrics-server addon (3.4d reads its APIService). */
  let inventory: string;
  /** What the test's own bash printed for each exercise, by id. */
  const typed = new Map<string, string>();
  const learn = (args: string[], timeoutMs = 300_000) =>
    hardwire(['learn', ...args, '--inventory', inventory, '--state-dir', w.state, '--quiet'], {
      timeoutMs,
    });
  const get = async <T>(path: string) =>
    (await kubeJson<T>(admin, 'GET', path, { allow: [404] })).json;

  beforeAll(async () => {
    w = await wiredTestLab(NAME, HOSTS.length, { workers: true, fresh: true });
    kc = join(w.state, NAME, 'kubeconfigs', 'admin.conf');
    admin = credsFromKubeconfig(kc);
    // Beside the lab's own (its knownHosts is relative), with the addon turned on, as a user would.
    const doc = parse(readFileSync(w.inv, 'utf8')) as { cluster: Record<string, unknown> };
    doc.cluster.addons = ['metrics-server'];
    inventory = w.inv.replace(/\.ya?ml$/, '-learn.yaml');
    writeFileSync(inventory, stringify(doc));
    const r = hardwire(['wire', '--inventory', inventory, '--state-dir', w.state, '--quiet'], {
      timeoutMs: 900_000,
    });
    if (r.code !== 0)
      throw new Error(`wire with metrics-server exited ${r.code}: ${r.stderr.slice(-2000)}`);
  }, 1_500_000);
  afterAll(async () => {
    await w?.lab.down();
  });

  it('before anything is done, --check of every exercise says not done, each with why; exit 1 and one line', () => {
    const r = learn(['--check', '--json']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(
      new RegExp(
        `^error: learn ${EXERCISES[0]!.id}: \\S.* \\(and ${EXERCISES.length - 1} more not done\\)$`,
      ),
    );
    const results = JSON.parse(r.stdout) as { id: string; done: boolean; findings: string[] }[];
    expect(results.map((x) => x.id)).toEqual(EXERCISES.map((e) => e.id));
    for (const x of results) {
      expect(x.done, x.id).toBe(false);
      expect(x.findings.length, x.id).toBeGreaterThan(0);
    }
  }, 300_000);

  it('the commands as a learner types them, each Verify read from the cluster and the output', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'hwtest-learner-'));
    // EC2 types `hardwire lab ssh node2 -- nft ...`: this lab's hosts, as learn's demo reaches them.
    const bin = join(cwd, '.bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'hardwire'),
      hardwireShim(
        loadInventory(inventory),
        ['--inventory', inventory, '--state-dir', w.state],
        [process.execPath, join(repoRoot, 'cli', 'hardwire.ts')],
      ),
      { mode: 0o755 },
    );
    try {
      for (const e of TYPED) {
        const r = await run('bash', ['--noprofile', '--norc'], {
          step: e.id,
          cwd,
          input: `exec 2>&1\n${e.commands.join('\n')}\nkill $(jobs -p) 2>/dev/null; wait 2>/dev/null; exit 0\n`,
          env: {
            PATH: `${dirname(binaryPath('kubectl', PINNED_KUBERNETES))}:${bin}:/usr/bin:/bin`,
            HOME: cwd,
            KUBECONFIG: kc,
          },
          timeoutMs: 240_000,
        });
        typed.set(e.id, r.stdout);
      }
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
    const out = (id: string) => typed.get(id)!;
    type Pod = {
      spec: { initContainers?: { name: string; restartPolicy?: string }[] };
      status: {
        phase: string;
        conditions?: { type: string; status: string }[];
        containerStatuses?: { imageID: string }[];
        initContainerStatuses?: { started?: boolean }[];
      };
    };
    // 0.1: by the names the task list uses, pulled from the lab registry by digest.
    const w1 = await get<Pod>(`${NS}/pods/w1`);
    expect(w1.status.phase).toBe('Running');
    expect(w1.status.containerStatuses![0]!.imageID).toMatch(
      /^docker\.io\/library\/busybox@sha256:/,
    );
    // 0.2: the sidecar wrote, the learner read it.
    const sc = await get<Pod>(`${NS}/pods/sidecar-demo`);
    expect(sc.spec.initContainers![0]!.restartPolicy).toBe('Always');
    expect(sc.status.initContainerStatuses![0]!.started).toBe(true);
    expect(out('0.2')).toMatch(/\d\d:\d\d:\d\d UTC 20\d\d/);
    // 1.1, 1.2: through the proxy; the eight verbs left nothing behind.
    expect(out('1.1')).toContain('"name": "w1"');
    expect((await kubeJson(admin, 'GET', `${NS}/configmaps/from-curl`)).status).toBe(200);
    expect(out('1.2')).toContain('"type":"ADDED"');
    const verbs = await get<{ items: unknown[] }>(`${NS}/configmaps?labelSelector=learn%3Dverbs`);
    expect(verbs.items).toEqual([]);
    // 1.3: the request line and the Table it asked for.
    expect(out('1.3')).toMatch(
      /"Request" verb="GET" url="https:\/\/[^"]+\/api\/v1\/namespaces\/api-lab\/pods\/w1"/,
    );
    expect(out('1.3')).toContain('as=Table');
    const auditId = /^\s*Audit-Id: ([0-9a-f-]{36})$/m.exec(out('1.3'))?.[1];
    expect(auditId, out('1.3')).toBeDefined();
    expect((await get<{ data: { auditID: string } }>(`${NS}/configmaps/v8`)).data.auditID).toBe(
      auditId,
    );
    // 2.1, 2.2: 410 in the stream, and a bookmark.
    expect(out('2.1')).toMatch(
      /"type":"ERROR".*too old resource version: 1 \(\d+\).*"reason":"Expired","code":410/,
    );
    expect(out('2.2')).toContain('"type":"BOOKMARK"');
    // 3.1, 3.2: /status kept the condition; the main endpoint dropped the other, and said no change.
    const conds = (await get<Pod>(`${NS}/pods/w1`)).status.conditions!.map((c) => c.type);
    expect(conds).toContain('learn.hardwire.dev/Checked');
    expect(conds).not.toContain('learn.hardwire.dev/Dropped');
    expect(out('3.2')).toContain('pod/w1 patched (no change)');
    // 3.3 to 3.6: the garbage collector, orphaning, the uid trap, a finalizer.
    const status = async (name: string) =>
      (await kubeJson(admin, 'GET', `${NS}/configmaps/${name}`, { allow: [404] })).status;
    expect(await status('dependent')).toBe(404);
    expect(await status('owner2')).toBe(404);
    const dep2 = await get<{ metadata: { ownerReferences?: unknown[] } }>(
      `${NS}/configmaps/dependent2`,
    );
    expect(dep2.metadata.ownerReferences ?? []).toEqual([]);
    expect(await status('owner3')).toBe(200);
    expect(await status('dependent3')).toBe(404);
    expect(out('3.6')).toMatch(/^20\d\d-\d\d-\d\dT[\d:]+Z$/m);
    expect(out('3.6')).toContain('configmaps "guarded" not found');
    // 4.1 to 4.4: the list merged then replaced; test refused whole; the conflict; the stale replace.
    expect(out('4.1')).toMatch(/^side nginx\n[\s\S]*^nginx$/m);
    expect((await get<{ data: { mode: string } }>(`${NS}/configmaps/jp`)).data.mode).toBe('b');
    expect(out('4.2')).toContain('The request is invalid');
    expect(out('4.3')).toContain('Apply failed with 1 conflict: conflict with "alice"');
    expect(
      (
        await get<{ spec: { replicas: number } }>(
          '/apis/apps/v1/namespaces/api-lab/deployments/ssa-demo',
        )
      ).spec.replicas,
    ).toBe(2);
    expect(out('4.4')).toContain(
      'the object has been modified; please apply your changes to the latest version and try again',
    );
    // 5.1 to 5.4.
    expect(out('5.1')).toMatch(/^continue=\S{20,}$/m);
    expect(out('5.2')).toMatch(/^own-demo-\S+\s+1\/1\s+Running/m);
    const uid = /^flowschema uid ([0-9a-f-]{36})$/m.exec(out('5.3'))?.[1];
    const fs = (
      await get<{
        items: {
          metadata: { uid: string; name: string };
          spec: { priorityLevelConfiguration: { name: string } };
        }[];
      }>('/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas')
    ).items.find((f) => f.metadata.uid === uid);
    expect(fs, out('5.3')).toBeDefined();
    expect(out('5.3')).toContain(
      `\n${fs!.metadata.name} ${fs!.spec.priorityLevelConfiguration.name}\n`,
    );
    expect(out('5.4')).toContain('should be less than or equal to 10');
    expect(out('5.4')).toContain('size must not exceed max');
    expect(out('5.4')).toMatch(/^NAME\s+SIZE\s+PHASE\nw-ok\s+3\s+Ready$/m);
    // The edge cases.
    expect(out('EC1')).toMatch(/Normal\s+Started\s+pod\/ev-demo/);
    expect((await kubeJson(admin, 'GET', `${NS}/pods/ev-demo`, { allow: [404] })).status).toBe(404);
    // EC2: the apiserver cut off from etcd answered resourceVersion=0 from its cache with the old
    // value at an older resourceVersion than the write the kept one reported; its quorum read timed
    // out; and the VIP (on the kept one's host) served throughout.
    const written = Number(
      /written through the kept apiserver at resourceVersion (\d+)/.exec(out('EC2'))?.[1],
    );
    const stale = /"resourceVersion":"(\d+)"\n"v":"before"/.exec(out('EC2'));
    expect(written).toBeGreaterThan(0);
    expect(stale, out('EC2')).not.toBeNull();
    expect(Number(stale![1])).toBeLessThan(written);
    expect(out('EC2')).toMatch(/^"v":"after"$/m);
    expect(out('EC2')).toMatch(
      /Unable to connect to the server: (context deadline exceeded|net\/http: request canceled)/,
    );
    expect(out('EC2')).toMatch(/the cut apiserver's cache caught up within \d+ s/);
    const vip = await get<{ spec: { holderIdentity: string } }>(
      '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/plndr-cp-lock',
    );
    expect(out('EC2')).toContain(`the VIP is on ${vip.spec.holderIdentity};`);
    const staleNow = await get<{ data: Record<string, string> }>(`${NS}/configmaps/stale`);
    expect(staleNow.data.v).toBe('after');
    const nsStatus = async (ns: string) =>
      (await kubeJson(admin, 'GET', `/api/v1/namespaces/${ns}`, { allow: [404] })).status;
    expect(out('EC3')).toContain(
      'NamespaceFinalizersRemaining: Some content in the namespace has finalizers remaining: learn.hardwire.dev/gone-controller',
    );
    expect(await nsStatus('ec3-lab')).toBe(404);
    expect(await nsStatus('ec4-lab')).toBe(404);
    expect(
      (await kubeJson(admin, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/ec4-leak'))
        .status,
    ).toBe(200);
    expect(out('EC4')).toMatch(/Warning\s+OwnerRefInvalidNamespace\s+clusterrole\/ec4-leak/);
    expect(out('EC5')).toContain('application/strategic-merge-patch+json is not supported');
    expect(
      (
        await get<{ spec: { size: number } }>(
          '/apis/learn.hardwire.dev/v1/namespaces/api-lab/widgets/w-ok',
        )
      ).spec.size,
    ).toBe(4);
    expect(out('EC6')).toMatch(/"name": "keep-a"/);
    expect(
      (
        await get<{ items: { metadata: { name: string } }[] }>(
          '/api/v1/namespaces/ec6-lab/configmaps',
        )
      ).items.map((i) => i.metadata.name),
    ).toEqual(['kube-root-ca.crt']);
    const gens = [...out('EC7').matchAll(/^(\d+) (\d+)$/gm)].map(
      (m) => [Number(m[1]), Number(m[2])] as const,
    );
    expect(gens[1]![0]).toBe(gens[0]![0]); // the label did not move generation
    expect(gens[2]![0]).toBe(gens[1]![0] + 1); // a Deployment's annotation did
    expect(gens[3]![0]).toBe(gens[2]![0] + 1); // the scale did
    expect(gens.at(-1)![1]).toBe(gens.at(-1)![0]);
    const flaps = [...out('EC8').matchAll(/^MODIFIED \d+ ([ab])$/gm)].map((m) => m[1]);
    expect(flaps.length).toBeGreaterThanOrEqual(4);
    expect(new Set(flaps)).toEqual(new Set(['a', 'b']));
  }, 900_000);

  it('--check of every exercise typed says done', () => {
    const r = learn([...TYPED.map((e) => e.id), '--check']);
    expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
    for (const e of TYPED) expect(r.stdout).toMatch(new RegExp(`^${e.id} done`, 'm'));
    expect(r.stdout).toContain(`${TYPED.length} of ${TYPED.length} done`);
  }, 300_000);

  it('--demo of every exercise, in order, runs its commands (again, for those typed) and passes its check', () => {
    const r = learn([...EXERCISES.map((e) => e.id), '--demo', '--json'], 1_700_000);
    const docs = JSON.parse(r.stdout) as {
      id: string;
      done: boolean;
      findings: string[];
      typed: { line: string; output: string }[];
    }[];
    for (const [i, e] of EXERCISES.entries()) {
      const d = docs[i]!;
      expect(d.id).toBe(e.id);
      expect(d.typed.map((t) => t.line)).toEqual(e.commands);
      expect(
        d.done,
        `${e.id}: ${d.findings.join('; ')}\n${d.typed
          .map((t) => `$ ${t.line}\n${t.output}`)
          .join('\n')
          .slice(-3000)}`,
      ).toBe(true);
    }
    expect(r.code, r.stderr.slice(-500)).toBe(0);
  }, 1_800_000);

  it("the capstone's three webhooks run at once, and trace apply --capstone of a new Thermo stops at a call out to each, at its cited line; each Pod logs the create", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hwtest-capstone-'));
    try {
      // Bad input first: one line naming the option, exit 2, before anything connects.
      const cm = join(dir, 'cm.yaml');
      writeFileSync(
        cm,
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: api-lab}\n',
      );
      const bad = hardwire([
        'trace',
        'apply',
        '--capstone',
        '-f',
        cm,
        '--inventory',
        inventory,
        '--state-dir',
        w.state,
      ]);
      expect(bad.code).toBe(2);
      expect(bad.stderr.trim().split('\n').at(-1)).toMatch(
        /^error: -f: with --capstone the object must be a Thermo/,
      );
      const file = join(dir, 'thermo.yaml');
      writeFileSync(
        file,
        `apiVersion: ${CAPSTONE_GROUP}/v2\nkind: Thermo\nmetadata: {name: retraced, namespace: api-lab}\nspec: {temperature: {value: 50, unit: F}}\n`,
      );
      // Read with kubectl, a process of its own: the spawnSync calls before this one blocked the event
      // loop for minutes, so a kept-alive socket the apiserver closed meanwhile is still pooled here
      // (a first run of this case failed on it with EPIPE, another with ECONNRESET).
      const kget = async <T>(path: string): Promise<T> => {
        const r = await run(
          binaryPath('kubectl', PINNED_KUBERNETES),
          ['--kubeconfig', kc, 'get', '--raw', path],
          {
            step: 'kubectl get --raw',
          },
        );
        return JSON.parse(r.stdout) as T;
      };
      const pods = await kget<{
        items: { metadata: { labels?: Record<string, string> }; status: { phase: string } }[];
      }>(`${NS}/pods`);
      const apps = ['capstone-mutate', 'capstone-validate', 'capstone-convert'];
      for (const a of apps)
        expect(
          pods.items.filter((p) => p.metadata.labels?.app === a && p.status.phase === 'Running')
            .length,
          a,
        ).toBe(1);
      const r = hardwire(
        [
          'trace',
          'apply',
          '--capstone',
          '-f',
          file,
          '--json',
          '--inventory',
          inventory,
          '--state-dir',
          w.state,
          '--quiet',
        ],
        { timeoutMs: 600_000 },
      );
      expect(r.code, r.stderr.slice(-1000)).toBe(0);
      const report = JSON.parse(r.stdout) as {
        capstone: {
          calls: { role: string; callOut: { ref: string; n: number; function: string } }[];
        };
        curriculum: { name: string; stage?: number }[];
      };
      // The live stack's call outs are the lines the capstone cites, each in its own package, in order.
      const cited = exercise('capstone').cites.map(
        (c) => `${c.site.module}@${c.site.version}/${c.site.file}:${c.site.line}`,
      );
      const calls = report.capstone.calls;
      expect(calls.map((c) => c.role)).toEqual(['mutating', 'validating', 'conversion']);
      for (const c of calls) expect(cited).toContain(c.callOut.ref);
      expect(calls[0]!.callOut.function).toMatch(/\/webhook\/mutating\./);
      expect(calls[1]!.callOut.function).toMatch(/\/webhook\/validating\./);
      expect(calls[2]!.callOut.function).toMatch(/\/conversion\.\(\*webhookConverter\)\.Convert$/);
      expect(calls[0]!.callOut.n).toBeLessThan(calls[1]!.callOut.n);
      expect(calls[1]!.callOut.n).toBeLessThan(calls[2]!.callOut.n);
      expect(report.curriculum.every((c) => c.stage !== undefined)).toBe(true);
      // The object as stored, read by the test: labelled by the mutating webhook, converted to v1.
      const t = await kget<{
        metadata: { labels?: Record<string, string> };
        spec: { celsius?: number };
      }>(`/apis/${CAPSTONE_GROUP}/v1/namespaces/api-lab/thermos/retraced`);
      expect(t.metadata.labels?.[MUTATED_LABEL]).toBe('true');
      expect(t.spec.celsius).toBe(10);
      // Each webhook's own Pod saw this create.
      const logs = async (a: string) =>
        (
          await run(
            binaryPath('kubectl', PINNED_KUBERNETES),
            ['--kubeconfig', kc, 'logs', '-n', 'api-lab', `deploy/${a}`],
            {
              step: 'kubectl logs',
              allowFail: true,
            },
          )
        ).stdout;
      expect(await logs('capstone-mutate')).toMatch(
        /CREATE Thermo api-lab\/retraced allowed=true patched/,
      );
      expect(await logs('capstone-validate')).toMatch(
        /CREATE Thermo api-lab\/retraced allowed=true/,
      );
      expect(await logs('capstone-convert')).toMatch(
        new RegExp(`api-lab/retraced ${CAPSTONE_GROUP}/v2 to ${CAPSTONE_GROUP}/v1`),
      );
      // The debug apiserver is gone from the host.
      await expectDebugApiserverGone(w.lab, HOSTS[0]!);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 700_000);

  it("no image was pulled from outside the lab: every pull in each host's containerd journal is a docker.io library image, none went to docker.io", async () => {
    for (const h of HOSTS) {
      const journal = await remote(await w.lab.ssh(h), [
        'journalctl',
        '-u',
        'containerd',
        '--no-pager',
        '-o',
        'cat',
      ]);
      const refs = [...journal.matchAll(/Pulled image \\?"([^"\\]+)\\?"/g)].map((m) => m[1]!);
      expect(refs.length, h).toBeGreaterThan(0);
      // As the Pods name them: busybox, nginx (docker.io's library), and the addon's own name.
      for (const ref of refs)
        expect(ref).toMatch(
          /^(docker\.io\/library\/)?(busybox|nginx)(:latest)?$|^registry\.k8s\.io\/metrics-server\/metrics-server:v0\.8\.0$/,
        );
      expect(journal).not.toMatch(/registry-1\.docker\.io|https:\/\/registry\.k8s\.io/);
    }
  });

  it('--demo --live: "too old resource version" from both causes, and a CRD\'s storage built and dropped, each line seen live by a tracepoint on a debug apiserver, which is gone after', async () => {
    const ids = EXERCISES.filter((e) => e.cites.some((c) => c.live)).map((e) => e.id);
    expect(ids).toEqual(['2.1', '3.4c', '3.5a', '3.5b']);
    // The namespace the typed commands made, so this case also runs alone (-t).
    await kubeJson(admin, 'POST', '/api/v1/namespaces', {
      body: { metadata: { name: 'api-lab' } },
      allow: [409],
    });
    const r = learn([...ids, '--demo', '--live', '--json'], 900_000);
    expect(r.code, r.stderr.slice(-1000)).toBe(0);
    const docs = JSON.parse(r.stdout) as {
      id: string;
      done: boolean;
      typed: { output: string }[];
      live: {
        ref: string;
        seen: boolean;
        hits: number;
        frames?: { file: string; line: number; function: string }[];
      }[];
    }[];
    expect(docs.map((d) => d.id)).toEqual(ids);
    for (const d of docs) {
      const e = EXERCISES.find((x) => x.id === d.id)!;
      expect(d.done, d.id).toBe(true);
      const cites = e.cites.filter((c) => c.live);
      expect(
        d.live.map((l) => l.ref),
        d.id,
      ).toEqual(
        cites.map((c) => `${c.site.module}@${c.site.version}/${c.site.file}:${c.site.line}`),
      );
      for (const [i, c] of cites.entries()) {
        const l = d.live[i]!;
        expect(l.seen, `${d.id} ${l.ref}`).toBe(true);
        expect(l.hits, `${d.id} ${l.ref}`).toBeGreaterThanOrEqual(1);
        // Where delve stopped, as it names the file: the cited line itself, and a caller above it.
        expect(l.frames?.[0]).toMatchObject({
          file: `${c.site.module}@${c.site.version}/${c.site.file}`,
          line: c.site.line,
        });
        expect(l.frames?.[1]?.file, `${d.id} ${l.ref}`).toMatch(/^k8s\.io\//);
      }
    }
    const out = (id: string) =>
      docs
        .find((d) => d.id === id)!
        .typed.map((t) => t.output)
        .join('\n');
    expect(out('2.1')).toMatch(
      /"message":"too old resource version: 1 \(\d+\)","reason":"Expired","code":410/,
    );
    expect(out('3.5a')).toMatch(/too old resource version: (\d+) \(\d+\)/);
    expect(out('3.5b')).toContain(
      'Error from server (Expired): The resourceVersion for the provided list is too old.',
    );
    await expectDebugApiserverGone(w.lab, HOSTS[0]!);
  }, 900_000);
});
