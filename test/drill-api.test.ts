// Drills 3.C1-3.C3 end to end on one wired 1-host lab, shared by the three drills. Every claim is
// checked from evidence read here, not from the report alone: the captured apiserver line in the
// journal (journalctl over SSH), the webhook server's own log file, kubectl during a --keep-broken
// break, the 3.C2 objects read with kubectl, 3.C3's 429s against /metrics, the CA hashed on the
// host, and `hardwire verify` after every recovery.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { hardwire } from './helpers/cli.ts';
import { remote, wiredTestLab, type TestLab } from './helpers/lab.ts';
import { credsFromKubeconfig } from '../core/transport/kube-api.ts';
import { sourcePath } from '../harness/drills/trace.ts';

let lab: TestLab;
let inv: string;
let state: string;
let admin: string;
const KUBECTL = join(process.env.HOME ?? '/root', '.cache/hardwire/bin/kubectl/v1.36.3/kubectl');

interface Trace {
  citation: string;
  kind: string;
  site: { module: string; version: string; file: string; line: number };
  format: string;
  klogHeaderAgrees?: boolean;
}
interface Captured {
  source: string;
  host?: string;
  unit?: string;
  file?: string;
  at: string;
  line: string;
  traces: Trace[];
}
interface Probe {
  command: string;
  code: number;
  output: string;
  asExpected: boolean;
  what: string;
}
interface Report {
  drill: string;
  captured: Captured[];
  symptoms: Probe[];
  stillWorks: Probe[];
  recovered: boolean;
  keptBroken: boolean;
  recoverCommand: string;
  finalGates: { ok: boolean }[];
  timeToDetectMs: number | null;
  timeToRecoverMs: number | null;
  broke: { at: string };
  details: Record<string, any>;
}

function drill(name: string, args: string[] = []): { r: Report; md: string } {
  const md = join(state, `${name}${args.length ? '-kept' : ''}.md`);
  const x = hardwire(
    ['drill', name, '--inventory', inv, '--state-dir', state, '--json', '--md', md, ...args],
    { timeoutMs: 600_000 },
  );
  expect(x.code, x.stderr.slice(-4000)).toBe(0);
  const text = readFileSync(md, 'utf8');
  expect(text + x.stdout + x.stderr).not.toMatch(/PRIVATE KEY|client-key-data/);
  return { r: JSON.parse(x.stdout) as Report, md: text };
}

function kubectl(args: string[], kubeconfig = admin): { code: number; out: string } {
  const r = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

/** The same without blocking, so this test's own load keeps running meanwhile. */
function kubectlAsync(args: string[], kubeconfig: string): Promise<string> {
  return new Promise((res) =>
    execFile(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 }, (_e, out, err) =>
      res(`${out}${err}`),
    ),
  );
}

async function onHost(argv: string[]): Promise<string> {
  const s = await lab.ssh('node1');
  try {
    return await remote(s, argv);
  } finally {
    await s.close();
  }
}

/** The captured line is in the apiserver's journal, verbatim, at the time the report gives. */
async function inJournal(c: Captured): Promise<boolean> {
  const since = Math.floor(Date.parse(c.at) / 1000) - 1;
  const out = await onHost([
    'journalctl',
    '-u',
    c.unit!,
    `--since=@${since}`,
    `--until=@${since + 3}`,
    '-o',
    'cat',
    '--no-pager',
  ]);
  return out.split('\n').includes(c.line);
}

/** Each citation holds its format string at the cited line of the pinned source; a log call's is the line klog's header names. */
function citationsHold(c: Captured): void {
  expect(c.traces.length).toBeGreaterThan(0);
  for (const x of c.traces) {
    const line = readFileSync(sourcePath(x.site), 'utf8').split('\n')[x.site.line - 1]!;
    expect(line, x.citation).toContain(x.format);
    expect(x.klogHeaderAgrees, x.citation).not.toBe(false);
  }
}

function verify(): void {
  const v = hardwire(['verify', '--inventory', inv, '--state-dir', state, '--json'], {
    timeoutMs: 300_000,
  });
  expect(v.code, v.stderr.slice(-2000)).toBe(0);
}

/**
 * kubectl's own watch of the 3.C2 objects in their stored version (v1: no conversion, so it works
 * through the break), from the moment their CRD exists until it is deleted. A separate process,
 * writing to a file, so it runs while the drill's synchronous run blocks this one.
 */
function watchThermos(): {
  events: () => {
    type: string;
    object: { metadata: { name: string; uid: string; resourceVersion: string }; spec: unknown };
  }[];
  stop: () => void;
} {
  const file = join(state, 'thermos-watch.json');
  const k = `${KUBECTL} --kubeconfig ${admin}`;
  const child = spawn(
    'sh',
    [
      '-c',
      `while :; do until ${k} get crd thermos.drills.hardwire.dev >/dev/null 2>&1; do sleep 0.1; done; ${k} -n hw-drill-conversion get thermos.v1.drills.hardwire.dev --watch --output-watch-events -o json >> ${file}; sleep 0.2; done`,
    ],
    { detached: true, stdio: 'ignore' },
  );
  const stop = () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      /* already gone */
    }
  };
  // The output is one JSON document per event, back to back.
  const events = () => {
    const text = readFileSync(file, 'utf8');
    const out = [];
    let depth = 0;
    let start = -1;
    let inStr = false;
    let esc = false;
    for (let i = 0; i < text.length; i++) {
      const ch = text[i];
      if (inStr) {
        if (esc) esc = false;
        else if (ch === '\\') esc = true;
        else if (ch === '"') inStr = false;
        continue;
      }
      if (ch === '"') inStr = true;
      else if (ch === '{') {
        if (depth++ === 0) start = i;
      } else if (ch === '}' && --depth === 0) out.push(JSON.parse(text.slice(start, i + 1)));
    }
    return out;
  };
  return { events, stop };
}

function rejectedFromMetrics(): number {
  const m = kubectl(['get', '--raw', '/metrics']).out;
  return m
    .split('\n')
    .filter(
      (l) =>
        l.startsWith('apiserver_flowcontrol_rejected_requests_total{') &&
        l.includes('flow_schema="hardwire-drill-flooder"') &&
        l.includes('priority_level="hardwire-drill-starved"'),
    )
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf('}') + 1)), 0);
}

beforeAll(async () => {
  ({ lab, inv, state } = await wiredTestLab('w1', 1));
  admin = hardwire(['kubeconfig', '--inventory', inv, '--state-dir', state]).stdout.trim();
});

afterAll(async () => {
  await lab?.down();
});

describe('API drills 3.C1-3.C3 on a wired 1-host lab', () => {
  it('bad input: one line naming the field, exit 2, nothing created', () => {
    for (const [args, msg] of [
      [['webhook-cabundle', '--listen', 'nope'], /^error: --listen: "nope" is not an IPv4 address/],
      [
        ['conversion-webhook', '--listen', '192.0.2.7'],
        /^error: --listen: 192\.0\.2\.7 is not an address of this machine/,
      ],
      [['apf-starve', '--observe-timeout', '1'], /--observe-timeout/],
    ] as const) {
      const x = hardwire(['drill', ...args, '--inventory', inv, '--state-dir', state]);
      expect(x.code).toBe(2);
      expect(x.stderr.trim().split('\n')).toHaveLength(1);
      expect(x.stderr).toMatch(msg);
    }
    expect(
      kubectl(['get', 'validatingwebhookconfigurations,crd,flowschemas', '-o', 'name']).out,
    ).not.toMatch(/hardwire-drill|drills\.hardwire\.dev/);
  });

  it('3.C1 webhook-cabundle: kept broken, kubectl writes are refused; a full run recovers and verify passes', async () => {
    const kept = drill('webhook-cabundle', ['--keep-broken']).r;
    expect(kept.keptBroken).toBe(true);
    // During the break, reproduced here: the write that would fix the workload is refused.
    const fix = kubectl([
      '-n',
      'hw-drill-cabundle',
      'set',
      'image',
      'deployment/app',
      'app=registry.k8s.io/pause:3.10',
    ]);
    expect(fix.code).not.toBe(0);
    expect(fix.out).toMatch(/failed calling webhook "cabundle\.drill\.hardwire\.dev"/);
    expect(kubectl(['-n', 'hw-drill-cabundle', 'get', 'deployment', 'app']).code).toBe(0);
    expect(kept.recoverCommand).toMatch(
      /delete validatingwebhookconfiguration hardwire-drill-cabundle/,
    );

    // The full run starts by clearing what --keep-broken left.
    const { r, md } = drill('webhook-cabundle');
    const j = r.captured.filter((c) => c.source === 'journal');
    expect(j.length).toBeGreaterThan(0);
    expect(j[0]!.line).toMatch(
      /Failed calling webhook, failing closed cabundle\.drill\.hardwire\.dev: .*x509: certificate signed by unknown authority/,
    );
    expect(await inJournal(j[0]!), `${j[0]!.at} ${j[0]!.line}`).toBe(true);
    citationsHold(j[0]!);
    expect(j[0]!.traces[0]!.citation).toMatch(
      /^k8s\.io\/apiserver@v0\.36\.3\/pkg\/admission\/plugin\/webhook\/validating\/dispatcher\.go:\d+$/,
    );
    expect(j[0]!.traces[0]!.klogHeaderAgrees, j[0]!.line.slice(0, 60)).toBe(true);
    // The webhook server's own log: it admitted writes before the break and saw the handshake fail after.
    const log = readFileSync(r.details.serverLog as string, 'utf8').split('\n');
    const at = (l: string) => l.slice(0, 24);
    expect(
      log.filter((l) => l.includes('AdmissionReview') && at(l) < r.broke.at).length,
    ).toBeGreaterThan(0);
    expect(log.some((l) => l.includes('TLS handshake failed') && at(l) >= r.broke.at)).toBe(true);
    expect(
      log.some(
        (l) =>
          l.includes('AdmissionReview') &&
          l.includes('hw-drill-cabundle/after-recovery-') &&
          at(l) > r.broke.at,
      ),
    ).toBe(true);
    for (const f of ['drill-ca.key', 'webhook.key'])
      expect(statSync(join(r.details.serverLog as string, '..', f)).mode & 0o777).toBe(0o600);
    expect(r.symptoms.every((s) => s.asExpected)).toBe(true);
    expect(r.stillWorks.every((s) => s.asExpected)).toBe(true);
    expect(r.recovered).toBe(true);
    expect(md).toContain('dispatcher.go:');
    expect(
      kubectl(['get', 'validatingwebhookconfiguration', 'hardwire-drill-cabundle']).code,
    ).not.toBe(0);
    expect(kubectl(['get', 'namespace', 'hw-drill-cabundle']).code).not.toBe(0);
    verify();
    console.log(
      `3.C1: detect ${r.timeToDetectMs} ms, recover ${r.timeToRecoverMs} ms; ${j[0]!.traces[0]!.citation}; ${j[0]!.line.slice(0, 220)}`,
    );
  }, 900_000);

  it('3.C2 conversion-webhook: kept broken, thermos reads fail and the objects sit intact in v1; a full run recovers them intact', async () => {
    const kept = drill('conversion-webhook', ['--keep-broken']).r;
    expect(kept.keptBroken).toBe(true);
    const ns = ['-n', 'hw-drill-conversion'];
    // The drill's webhook is gone with its process: every read that needs a conversion fails.
    const v2 = kubectl([
      ...ns,
      'get',
      'thermos.v2.drills.hardwire.dev',
      'written-as-v1',
      '-o',
      'json',
    ]);
    expect(v2.code).not.toBe(0);
    expect(v2.out).toMatch(/conversion webhook for drills\.hardwire\.dev\/v1, Kind=Thermo/);
    expect(kubectl([...ns, 'get', 'notes']).code).toBe(0);
    // The objects themselves: read in the stored version, same uid, resourceVersion and spec as before the break.
    const before = kept.details.before.v1 as Record<
      string,
      { uid: string; resourceVersion: string; spec: unknown }
    >;
    const read = () =>
      Object.fromEntries(
        (
          JSON.parse(
            kubectl([
              ...ns,
              'get',
              'thermos.v1.drills.hardwire.dev',
              'written-as-v1',
              'written-as-v2',
              '-o',
              'json',
            ]).out,
          ) as { items: any[] }
        ).items.map((i) => [
          i.metadata.name,
          { uid: i.metadata.uid, resourceVersion: i.metadata.resourceVersion, spec: i.spec },
        ]),
      );
    expect(read()).toEqual(before);
    expect(before['written-as-v2']!.spec).toEqual({ celsius: 21.11 });

    const watch = watchThermos();
    const { r } = (() => {
      try {
        return drill('conversion-webhook');
      } finally {
        watch.stop();
      }
    })();
    const j = r.captured.filter((c) => c.source === 'journal');
    expect(j.length).toBeGreaterThan(0);
    expect(j[0]!.line).toMatch(
      /conversion webhook for drills\.hardwire\.dev\/v1, Kind=Thermo returned invalid (converted )?object at index 0: invalid groupVersion \(expected drills\.hardwire\.dev\/v\d, received garbage\.invalid\/v0\)/,
    );
    expect(await inJournal(j[0]!), `${j[0]!.at} ${j[0]!.line}`).toBe(true);
    citationsHold(j[0]!);
    const log = readFileSync(r.details.serverLog as string, 'utf8');
    expect(log).toMatch(/ConversionReview .*\(garbage\)/);
    expect(r.symptoms.every((s) => s.asExpected)).toBe(true);
    expect(
      r.symptoms.some(
        (s) => /get thermos$/.test(s.command) && /garbage\.invalid\/v0/.test(s.output),
      ),
    ).toBe(true);
    expect(r.stillWorks.find((s) => / get notes$/.test(s.command))?.code).toBe(0);
    expect(r.details.intact).toBe(true);
    expect(r.details.after).toEqual(r.details.before);
    // Intact as kubectl saw them throughout the run: each object added once with the uid,
    // resourceVersion and spec the drill recorded before the break, never modified, until the cleanup deleted it.
    const seen = watch.events();
    const names = Object.keys(r.details.before.v1 as object).sort();
    expect(names).toEqual(['written-as-v1', 'written-as-v2']);
    // (The drill also creates written-during-break, in v1, as its break's first write.) Only this
    // run's objects, by uid: the watch starts while the --keep-broken run's CRD still exists, sees
    // those objects deleted, ends with their CRD, and starts again (its first LIST) on the new one.
    const uids = new Set(
      Object.values(r.details.before.v1 as Record<string, { uid: string }>).map((o) => o.uid),
    );
    const ours = seen.filter((e) => uids.has(e.object.metadata.uid));
    expect(
      ours
        .filter((e) => e.type !== 'ADDED' && e.type !== 'DELETED')
        .map((e) => `${e.type} ${e.object.metadata.name} rv ${e.object.metadata.resourceVersion}`),
      'kubectl watch: changes to the objects',
    ).toEqual([]);
    const added = Object.fromEntries(
      ours
        .filter((e) => e.type === 'ADDED')
        .map((e) => [
          e.object.metadata.name,
          {
            uid: e.object.metadata.uid,
            resourceVersion: e.object.metadata.resourceVersion,
            spec: e.object.spec,
          },
        ]),
    );
    expect(added, 'kubectl watch: the objects as added').toEqual(r.details.before.v1);
    expect(r.recovered).toBe(true);
    expect(kubectl(['get', 'crd', 'thermos.drills.hardwire.dev']).code).not.toBe(0);
    verify();
    console.log(
      `3.C2: detect ${r.timeToDetectMs} ms, recover ${r.timeToRecoverMs} ms; ${j[0]!.traces.map((c) => c.citation).join(' <- ')}; ${j[0]!.line.slice(0, 220)}`,
    );
  }, 900_000);

  it('3.C3 apf-starve: kept broken, the flooder meets 429s naming the schema; a full run: 429s agree with /metrics, the admin and the Lease sail through, the CA is unchanged', async () => {
    const caHash = () => onHost(['sha256sum', '/etc/kubernetes/pki/ca.crt']);
    const ca0 = await caHash();
    const kept = drill('apf-starve', ['--keep-broken']).r;
    expect(kept.keptBroken).toBe(true);
    const conf = kept.details.identity.kubeconfig as string;
    expect(statSync(conf).mode & 0o777).toBe(0o600);
    // Our own load, from this test, while kubectl asks as the same identity.
    const creds = credsFromKubeconfig(conf);
    const agent = new Agent({ keepAlive: true, maxSockets: 60 });
    let stop = false;
    const statuses: number[] = [];
    const headers = new Set<string>();
    const load = Promise.all(
      Array.from({ length: 60 }, async () => {
        while (!stop) {
          await new Promise<void>((res) =>
            request(
              new URL('/api/v1/configmaps', creds.server),
              { ca: creds.ca, cert: creds.cert, key: creds.key, agent },
              (r) => {
                statuses.push(r.statusCode ?? 0);
                if (r.statusCode === 429)
                  headers.add(
                    `${String(r.headers['x-kubernetes-pf-flowschema-uid'])}/${String(r.headers['x-kubernetes-pf-prioritylevel-uid'])}`,
                  );
                r.resume();
                r.on('end', res);
              },
            )
              .on('error', () => res())
              .end(),
          );
        }
      }),
    );
    let seen = '';
    // Until kubectl itself meets a 429 (client-go retries it, -v=6 shows each response), or 60 s: how
    // soon depends on how fast this machine serves the flood.
    const until = Date.now() + 60_000;
    while (Date.now() < until && !/429 Too Many Requests/.test(seen))
      seen = await kubectlAsync(['get', 'configmaps', '-A', '-v=6', '--request-timeout=5s'], conf);
    stop = true;
    await load;
    agent.destroy();
    expect(seen).toMatch(/status="429 Too Many Requests"/);
    expect(statuses).toContain(429);
    expect([...headers]).toEqual([
      `${kept.details.flowSchema.uid}/${kept.details.priorityLevel.uid}`,
    ]);
    for (const c of [
      `delete flowschema hardwire-drill-flooder`,
      `delete prioritylevelconfiguration hardwire-drill-starved`,
      `delete clusterrolebinding,clusterrole hardwire-drill-flooder`,
    ]) {
      expect(kubectl(c.split(' ')).code).toBe(0);
    }

    const lease = () =>
      (
        JSON.parse(
          kubectl(['-n', 'kube-system', 'get', 'lease', 'kube-controller-manager', '-o', 'json'])
            .out,
        ) as { spec: { holderIdentity: string; leaseTransitions?: number; renewTime: string } }
      ).spec;
    const lease0 = lease();
    const m0 = rejectedFromMetrics();
    const { r } = drill('apf-starve');
    const m1 = rejectedFromMetrics();
    const f = r.details.flood;
    const got429 = f.byStatus['429'] as number;
    expect(got429).toBeGreaterThan(0);
    expect(f.rejectedWithOurHeaders).toBe(got429);
    expect(f.sent).toBeLessThanOrEqual(f.count);
    // Every 429 the drill and its kubectl met is one count in the apiserver's own counter, read here.
    expect(m1 - m0).toBe(got429 + (f.kubectl429 as number));
    expect(r.details.metrics.apiserver_flowcontrol_rejected_requests_total.delta).toBe(m1 - m0);
    expect(
      r.details.metrics.apiserver_flowcontrol_request_queue_length_after_enqueue_count.delta,
    ).toBeGreaterThan(0);
    const audit = r.captured.find((c) => c.source === 'audit-log')!;
    const auditId = (JSON.parse(audit.line) as { auditID: string }).auditID;
    const onDisk = await onHost(['grep', '-F', auditId, '/var/log/kubernetes/audit/audit.log']);
    expect(onDisk).toContain('"code":429');
    expect(onDisk).toContain('"username":"hardwire:drill:flooder"');
    citationsHold(r.captured.find((c) => c.source === 'response')!);
    expect(r.details.admin.statuses).toEqual([200]);
    expect(r.details.admin.requests).toBeGreaterThan(3);
    // The admin's requests during the flood, in the apiserver's own audit log on the host: every one answered 200.
    const floodEnd = Date.parse(r.broke.at) + (f.ms as number);
    const adminDuring = (
      await onHost([
        'grep',
        '-F',
        '"requestURI":"/api/v1/namespaces/kube-system"',
        '/var/log/kubernetes/audit/audit.log',
      ])
    )
      .split('\n')
      .filter(Boolean)
      .map(
        (l) =>
          JSON.parse(l) as {
            stage: string;
            user: { username: string };
            requestReceivedTimestamp: string;
            responseStatus?: { code: number };
          },
      )
      .filter(
        (e) =>
          e.stage === 'ResponseComplete' &&
          e.user.username === 'kubernetes-admin' &&
          Date.parse(e.requestReceivedTimestamp) >= Date.parse(r.broke.at) &&
          Date.parse(e.requestReceivedTimestamp) <= floodEnd,
      );
    expect(adminDuring.length, 'admin requests in the audit log during the flood').toBeGreaterThan(
      0,
    );
    expect(
      adminDuring.filter((e) => e.responseStatus?.code !== 200),
      'admin requests not answered 200',
    ).toEqual([]);
    // The controller-manager's Lease, read with kubectl: the same holder, no new transition, renewed since the flood began.
    const lease1 = lease();
    expect(lease1.holderIdentity).toBe(lease0.holderIdentity);
    expect(lease1.leaseTransitions ?? 0).toBe(lease0.leaseTransitions ?? 0);
    expect(Date.parse(lease1.renewTime)).toBeGreaterThan(Date.parse(r.broke.at));
    expect(r.details.controllerLease.statuses).toEqual([200]);
    expect(r.details.controllerLease.flowSchema).toBe('system-leader-election');
    expect(r.details.controllerLease.renewalsSeenDuringFlood).toBeGreaterThanOrEqual(2);
    // Generous: under the Lease's 15 s duration, the gap that would let another candidate take it; a
    // loaded 2-core machine stretches renewals well past their 2 s period. The holder check above is the evidence.
    expect(r.details.controllerLease.maxGapMs).toBeLessThan(15_000);
    expect(r.recovered).toBe(true);
    expect(kubectl(['get', 'flowschema', 'hardwire-drill-flooder']).code).not.toBe(0);
    expect(kubectl(['get', 'prioritylevelconfiguration', 'hardwire-drill-starved']).code).not.toBe(
      0,
    );
    expect(await caHash()).toBe(ca0);
    verify();
    console.log(
      `3.C3: ${JSON.stringify(f.byStatus)} in ${f.ms} ms, metrics +${m1 - m0}; admin ${JSON.stringify(r.details.admin.latencyMs)} ms, controller Lease ${JSON.stringify(r.details.controllerLease.latencyMs)} ms, max renew gap ${r.details.controllerLease.maxGapMs} ms; recover ${r.timeToRecoverMs} ms`,
    );
  }, 900_000);
  // Each API drill again, twice, one after the other on the same lab, with verify after each: with
  // the full runs above, three runs of each. A drill that passes only once in a while, or leaves
  // something behind that the next run or verify trips on, fails here; the failing run's last
  // stderr line names the expectation it did not meet.
  it('3.C1-3.C3 again, twice in a row, with verify after each: every run recovers', () => {
    for (let round = 1; round <= 2; round++) {
      for (const name of ['webhook-cabundle', 'conversion-webhook', 'apf-starve']) {
        const { r } = drill(name);
        expect(r.recovered, `${name} round ${round}`).toBe(true);
        expect(r.symptoms.length, `${name} round ${round}`).toBeGreaterThan(0);
        expect(
          r.symptoms.every((x) => x.asExpected),
          `${name} round ${round}: ${JSON.stringify(r.symptoms.map((x) => [x.what, x.code]))}`,
        ).toBe(true);
        verify();
      }
    }
  }, 1_800_000);
});
