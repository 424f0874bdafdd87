// `hardwire flags prove` for kube-scheduler, kube-controller-manager, kube-apiserver and etcd on one
// wired 1-host lab (issue 25). The evidence is read independently of prove: each hit file:line is re-opened in the Go
// module cache, must lie inside the function delve reported, and must spell the flag's selector.
// Then two mutations of the scheduler's map: a citation moved by one line, and the wrong citation
// the analyzer used to make (code the linker drops): each must come back reported as wrong.
// `trace apply` (test/helpers/trace-suite.ts) runs on the same lab, so CI boots no extra one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hardwire } from './helpers/cli.ts';
import { remote, wiredTestLab, type WiredLab } from './helpers/lab.ts';
import { loadFlagMap } from '../core/flags/map.ts';
import type { ProveReport } from '../harness/prove/index.ts';
import { enclosingFunc, sourceLines } from '../harness/prove/source.ts';
import { independentProblem, selectorOf } from './helpers/prove-evidence.ts';
import { traceSuite } from './helpers/trace-suite.ts';
import { traceWebhookSuite } from './helpers/trace-webhook-suite.ts';
import { firstBootEvidence } from './helpers/etcd-first-boot-suite.ts';

const PROVE_MS = 1_500_000; // includes a cold debug build (see README figures)
/**
 * Each component, and a flag whose best citation reads the unit's value in a form delve can
 * compare (a string): the run is checked to have read exactly that value there.
 */
const KUBE = [
  ['kube-scheduler', 'kubeconfig'],
  ['kube-controller-manager', 'kubeconfig'],
] as const;
/** The bar: at least this share of the cited read sites hit in the running binary. */
const SITES_HIT = 0.95;

let w: WiredLab;

function prove(component: string, extra: string[] = []): ProveReport {
  const r = hardwire(
    [
      'flags',
      'prove',
      '--component',
      component,
      '--inventory',
      w.inv,
      '--state-dir',
      w.state,
      '--json',
      ...extra,
    ],
    { timeoutMs: PROVE_MS },
  );
  if (r.code !== 0) throw new Error(`flags prove exited ${r.code}: ${r.stderr.slice(-3000)}`);
  if (!extra.length) writeFileSync(join(w.lab.stateDir, `${component}.prove.json`), r.stdout); // kept for the README's figures
  return JSON.parse(r.stdout) as ProveReport;
}

beforeAll(async () => {
  w = await wiredTestLab('w1', 1);
});

afterAll(async () => {
  await w?.lab.down();
});

/** After a prove: the unit runs again, and delve's scratch dir is gone. */
async function unitBack(component: string): Promise<void> {
  const s = await w.lab.ssh(w.lab.info.hosts[0]!.name);
  try {
    expect(await remote(s, ['systemctl', 'is-active', `${component}.service`])).toBe('active');
    expect(
      await remote(s, ['sh', '-c', 'ls -d /var/tmp/hardwire-prove.* 2>/dev/null || true']),
    ).toBe('');
  } finally {
    await s.close();
  }
}

async function mainPid(component: string): Promise<string> {
  const s = await w.lab.ssh(w.lab.info.hosts[0]!.name);
  try {
    return await remote(s, [
      'systemctl',
      'show',
      '-p',
      'MainPID',
      '--value',
      `${component}.service`,
    ]);
  } finally {
    await s.close();
  }
}

/** The unit's --name=value flags, read from its file on the host. */
async function unitFlags(component: string): Promise<Map<string, string>> {
  const s = await w.lab.ssh(w.lab.info.hosts[0]!.name);
  try {
    const text = await remote(s, ['cat', `/etc/systemd/system/${component}.service`]);
    return new Map([...text.matchAll(/--([\w-]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
  } finally {
    await s.close();
  }
}

/**
 * What a component must reach: a share of its cited sites, and every flag but those whose sites
 * all sit on a path the test shows, from the source, that a restart with a data dir skips.
 */
interface Bar {
  sitesHit: number;
  /**
   * A first boot (etcd in an empty data dir): the flag read only then is hit at every site, each
   * inside the function whose call sits behind the guard, read here from the module cache.
   */
  firstBoot?: { flag: string; function: string; guard: { ref: string; text: string } };
  /** Run on the host before prove (the first boot's evidence, armed). */
  arm?: () => Promise<void>;
  /** Sites read only on a host with a default route, which prove adds for the proof where the host has none. */
  defaultRoute?: string[];
  /** Flags with sites after an early return, and the guard their reason must name. */
  earlyReturn?: [string, string][];
  /** Run beside the unit (kube-apiserver): the unit keeps its process, and these flags are changed for the run. */
  beside?: string[];
  /** Cited sites the linker dropped (wrong citations prove reports as code the component never runs). */
  linkedAway?: string[];
  /**
   * Sent SIGTERM past its gate: these sites are first hit then, the debug unit's journal, read
   * here, holds these lines of its shutdown, and delve reports this exit status (default 0).
   */
  shutdown?: { sites: string[]; journal: RegExp[]; exitStatus?: number };
  /** The flags whose first citation (the one the rendered unit shows) is not hit; every other flag's is. */
  firstMisses?: string[];
  /** A flag with a cited read the map marks conditional on another flag, and that condition's line: the miss names it. */
  conditional?: [string, string, string][];
  /**
   * Sites not hit that a guard delve evaluated kept out at every stop (guards.ts): each site's ref
   * and its guard's line. The share of the sites not off (by the unit's flags or live) must reach
   * the 95%.
   */
  liveOff?: [string, number][];
}

/** The host's clock (seconds), for the journal lines of one run. */
async function hostNow(): Promise<string> {
  const s = await w.lab.ssh(w.lab.info.hosts[0]!.name);
  try {
    return await remote(s, ['date', '+%s']);
  } finally {
    await s.close();
  }
}

function proveSuite(
  component: string,
  signature: string,
  gate: RegExp,
  bar: Bar = { sitesHit: SITES_HIT },
): void {
  let report: ProveReport;
  const map = loadFlagMap(component);
  let since = '';

  it(
    'runs the debug build under delve with every flag of the unit, until it passes its gate',
    async () => {
      const pid = bar.beside ? await mainPid(component) : '';
      since = await hostNow();
      await bar.arm?.();
      report = prove(component);
      if (bar.beside) {
        // The unit was never stopped; the changed flags are reported with the unit's values (read from its file here), and traced.
        expect(await mainPid(component)).toBe(pid);
        const unit = await unitFlags(component);
        expect(report.changed?.map((c) => c.flag).sort()).toEqual([...bar.beside].sort());
        for (const c of report.changed!) {
          expect(c.unit, c.flag).toBe(unit.get(c.flag));
          expect(report.flags.find((f) => f.flag === c.flag)?.value, c.flag).toBe(c.run);
        }
      }
      expect(report.exited).toBeUndefined();
      expect(report.holder).toMatch(gate);
      expect(report.flags.map((f) => `--${f.flag}=${f.value}`)).toEqual(report.argv.slice(1));
      expect(report.counts.flags).toBeGreaterThan(0);
      // Every flag is judged, and a miss always says why.
      for (const f of report.flags) if (f.verdict !== 'hit') expect(f.reason, f.flag).toBeTruthy();
      expect(report.counts.hit).toBe(report.flags.filter((f) => f.verdict === 'hit').length);
    },
    PROVE_MS,
  );

  it("each hit file:line lies in the function delve reported and spells the flag's selector", () => {
    const hits = report.flags.flatMap((f) =>
      f.sites.filter((s) => s.status === 'hit').map((s) => ({ f, s })),
    );
    expect(hits.length).toBeGreaterThan(0);
    for (const { f, s } of hits) {
      if (selectorOf(map, f.flag, s.ref).startsWith('"')) continue; // a lookup by name: the line spells the flag, checked by flags verify
      expect(
        independentProblem(s, selectorOf(map, f.flag, s.ref)),
        `--${f.flag} ${s.ref}`,
      ).toBeUndefined();
    }
    // Every cited line has a tracepoint: no line without a statement, and no code the linker
    // dropped (the analyzer's interface calls resolve to the types the process makes).
    const unset = report.flags.flatMap((f) =>
      f.sites.filter((s) => s.status === 'unset').map((s) => ({ f, s })),
    );
    expect(
      unset.map(({ f, s }) => `--${f.flag} ${s.ref}`),
      unset.map(({ s }) => s.reason).join('\n'),
    ).toEqual(bar.linkedAway ?? []);
    for (const { s } of unset)
      expect(s.reason).toMatch(/is not in the binary \(the linker dropped it/);
    // The signature flag is read at its best citation, and delve read the unit's value there.
    const sig = report.flags.find((f) => f.flag === signature)!;
    expect(sig.verdict).toBe('hit');
    expect(sig.seen?.match, JSON.stringify(sig.seen)).toBe(true);
  });

  it(`hits at least ${bar.sitesHit * 100}% of the cited read sites, and every flag`, () => {
    const misses = report.flags.flatMap((f) =>
      f.sites.filter((s) => s.status !== 'hit').map((s) => `--${f.flag} ${s.ref}: ${s.reason}`),
    );
    // The figures the README gives per component, in the test's output.
    console.log(
      `${component}: ${JSON.stringify(report.counts)}, traced ${report.seconds.traced.toFixed(0)} s, in all ${report.seconds.total.toFixed(0)} s\n${misses.join('\n')}`,
    );
    const first = bar.firstBoot;
    if (first) {
      expect(report.firstBoot?.done, JSON.stringify(report.firstBoot)).toBe(true);
      // Its every site is hit and lies in that function, whose call in StartEtcd is behind the guard, read here from the module cache.
      const f = report.flags.find((x) => x.flag === first.flag)!;
      expect(f.sites.length).toBeGreaterThan(0);
      for (const s of f.sites) {
        expect([s.status, s.hits > 0], `${s.ref}: ${s.reason ?? ''}`).toEqual(['hit', true]);
        const [, module, version, file, line] = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(s.ref)!;
        expect(enclosingFunc(sourceLines(module!, version!, file!)!, Number(line)), s.ref).toBe(
          first.function,
        );
      }
      const [, module, version, file, line] = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(first.guard.ref)!;
      const src = sourceLines(module!, version!, file!)!;
      expect(src[Number(line) - 1]!.trim()).toBe(first.guard.text);
      expect(src.slice(Number(line), Number(line) + 3).join('\n')).toContain(
        `${first.function.replace(/^\(\*\w+\)/, 'cfg')}(`,
      );
    }
    for (const ref of bar.defaultRoute ?? []) {
      const site = report.flags.flatMap((f) => f.sites).find((x) => x.ref === ref);
      expect(
        [site?.status, (site?.hits ?? 0) > 0],
        `${ref}: ${site?.reason ?? 'not cited'}`,
      ).toEqual(['hit', true]);
    }
    // Then the share, and every flag.
    expect(report.counts.sitesHit / report.counts.sites, misses.join('\n')).toBeGreaterThanOrEqual(
      bar.sitesHit,
    );
    expect(
      report.flags.filter((f) => f.verdict !== 'hit').map((f) => `--${f.flag}: ${f.reason}`),
    ).toEqual([]);
    // A miss after an early return names it: that line, read back, is an `if` of the same function, before the site.
    for (const s of report.flags.flatMap((f) => f.sites)) {
      for (const [, n, text] of (s.reason ?? '').matchAll(/line (\d+) `([^`]*)`/g)) {
        const [, module, version, file, line] = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(s.ref)!;
        const src = sourceLines(module!, version!, file!)!;
        expect(src[Number(n) - 1]!.trim(), `${s.ref}: ${s.reason}`).toBe(text);
        expect(Number(n)).toBeLessThan(Number(line));
        expect(enclosingFunc(src, Number(n)), s.ref).toBe(enclosingFunc(src, Number(line)));
      }
    }
    // The first citation of each flag: hit, but for the flags the bar names (each explained above).
    if (bar.firstMisses) {
      const firstMissed = report.flags
        .filter((f) => f.sites[0]?.status !== 'hit')
        .map((f) => f.flag);
      console.log(
        `${component}: first citations hit ${report.flags.length - firstMissed.length} of ${report.flags.length}`,
      );
      expect(firstMissed.sort()).toEqual([...bar.firstMisses].sort());
    }
    // Off in this run: the guard the reason names is, read back here, a line of the site's own
    // function before it, whose text the reason quotes; and the sites the bar names are off by it.
    const live = report.flags.flatMap((f) => f.sites).filter((s) => s.status === 'off' && s.live);
    for (const s of live) {
      const m =
        /^ruled out in this run: (.+):(\d+) `([^`]*)` was (true|false) at (the one stop|each of the \d+ stops) delve made there/.exec(
          s.live!,
        );
      expect(m, s.live).not.toBeNull();
      const [, module, version, file, line] = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(s.ref)!;
      expect(m![1], s.ref).toBe(file);
      const src = sourceLines(module!, version!, file!)!;
      const n = Number(m![2]);
      expect(m![3]!.startsWith(src[n - 1]!.trim()), `${s.ref}: ${s.live}`).toBe(true);
      expect(n, s.ref).toBeLessThan(Number(line));
      expect(enclosingFunc(src, n), s.ref).toBe(enclosingFunc(src, Number(line)));
    }
    const liveAt = live.map((s) => [s.ref, Number(/:(\d+) `/.exec(s.live!)![1])]);
    for (const want of bar.liveOff ?? []) expect(liveAt, want[0]).toContainEqual(want);
    if (bar.liveOff) {
      console.log(
        `${component}: ${live.length} sites off in this run (guards delve evaluated); hit ${report.counts.sitesHit} of the ${report.counts.sites - report.counts.sitesOff} not off`,
      );
      expect(
        report.counts.sitesHit / (report.counts.sites - report.counts.sitesOff),
        misses.join('\n'),
      ).toBeGreaterThanOrEqual(SITES_HIT);
    }
    // A site the unit's own flags rule out (decide.ts) is off, traced and not hit: none is hit (a contradiction).
    expect(
      report.flags.flatMap((f) => f.sites).filter((s) => s.status === 'off' && s.hits > 0),
    ).toEqual([]);
    expect(
      report.flags.flatMap((f) =>
        f.sites.filter((s) => s.contradiction).map((s) => `--${f.flag} ${s.ref}: ${s.reason}`),
      ),
    ).toEqual([]);
    // A miss at a read the map marks conditional on a flag the unit does not pass is off, and names
    // the other flag and the condition's line, read back here.
    for (const [flag, other, text] of bar.conditional ?? []) {
      const cited = map.flags
        .find((f) => f.name === flag)!
        .consumedAt.filter((c) => c.condition?.flags.includes(other));
      expect(cited.length, `--${flag} conditional on --${other}`).toBeGreaterThan(0);
      for (const c of cited) {
        const [, module, version, file, line] = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(
          c.condition!.at,
        )!;
        expect(sourceLines(module!, version!, file!)![Number(line) - 1]!.trim()).toBe(text);
        const s = report.flags
          .find((f) => f.flag === flag)!
          .sites.find((x) => x.ref === `${c.module}@${c.version}/${c.file}:${c.line}`)!;
        expect(s.status, s.ref).toBe('off');
        expect(s.reason, s.ref).toBe(
          `ruled out by the unit's flags: ${file}:${line} \`${text}\` needs --${other} set, and the unit does not pass it`,
        );
      }
    }
    for (const [flag, guard] of bar.earlyReturn ?? []) {
      const sites = report.flags
        .find((f) => f.flag === flag)!
        .sites.filter((s) => s.reason?.includes('after the early return'));
      expect(sites.length, `--${flag}`).toBeGreaterThan(0);
      for (const s of sites) expect(s.reason, s.ref).toContain(`\`${guard}\``);
    }
  });

  if (bar.shutdown) {
    const { sites, journal } = bar.shutdown;
    it(`past its gate, sent SIGTERM, it exits with ${bar.shutdown.exitStatus ?? 0}; its shutdown sites are hit only then, and its journal shows the shutdown`, async () => {
      const s = await w.lab.ssh(w.lab.info.hosts[0]!.name);
      try {
        const text = await remote(s, [
          'journalctl',
          '-u',
          `hardwire-prove-${component}.service`,
          '--since',
          `@${since}`,
          '-o',
          'cat',
          '--no-pager',
        ]);
        for (const re of journal) expect(text, re.source).toMatch(re);
      } finally {
        await s.close();
      }
      expect(report.shutdown?.exitStatus, JSON.stringify(report.shutdown)).toBe(
        bar.shutdown!.exitStatus ?? 0,
      );
      const all = report.flags.flatMap((f) => f.sites);
      for (const ref of sites) {
        const site = all.find((x) => x.ref === ref);
        expect(site, ref).toBeDefined();
        expect([site!.status, site!.atShutdown], `${ref}: ${site!.reason ?? ''}`).toEqual([
          'hit',
          true,
        ]);
      }
    });
  }

  it('leaves the unit running again, and no scratch dir', async () => {
    await unitBack(component);
  });
}

// A Lease holder other than the stopped unit's: prove reads it as `<host>_<uuid>`.
describe.each(KUBE)('hardwire flags prove --component %s', (component, signature) =>
  proveSuite(component, signature, /^\S+_[0-9a-f-]{36}$/),
);

describe('hardwire flags prove: mutations of the map are caught', () => {
  const component = 'kube-scheduler';
  const map = loadFlagMap(component);

  it(
    'a citation moved by one line is reported not hit, or fails the independent check',
    async () => {
      const mutated = structuredClone(map);
      const site = mutated.flags.find((f) => f.name === 'kubeconfig')!.consumedAt[0]!;
      const was = `${site.module}@${site.version}/${site.file}:${site.line}`;
      site.line += 1;
      const file = join(w.lab.stateDir, `${component}.moved.json`);
      writeFileSync(file, JSON.stringify(mutated));
      const r = prove(component, ['--map', file]);
      const moved = r.flags
        .find((f) => f.flag === 'kubeconfig')!
        .sites.find((s) => s.ref === `${site.module}@${site.version}/${site.file}:${site.line}`)!;
      expect(moved, `moved from ${was}`).toBeDefined();
      const caught =
        moved.status !== 'hit' || independentProblem(moved, site.selector) !== undefined;
      expect(caught, JSON.stringify(moved)).toBe(true);
      // prove says so itself: no tracepoint at a line without code, or a hit line that reads something else.
      expect(moved.reason ?? '', JSON.stringify(moved)).toMatch(/citation is wrong/);
      await unitBack(component);
      expect(readFileSync(file, 'utf8')).toContain('"line"');
    },
    PROVE_MS,
  );

  it(
    'the citation CHA made (PathOptions, linked away) is reported as code the component never runs',
    async () => {
      // What the analyzer cited for --authentication-kubeconfig before it resolved interface calls
      // by the types made: (*clientcmd.PathOptions).IsExplicitFile, client-go config.go:137.
      const mutated = structuredClone(map);
      const f = mutated.flags.find((x) => x.name === 'authentication-kubeconfig')!;
      const model = f.consumedAt.find((c) => c.module === 'k8s.io/client-go')!;
      expect(f.consumedAt.some((c) => c.file === 'tools/clientcmd/config.go')).toBe(false);
      f.consumedAt.push({
        ...model,
        file: 'tools/clientcmd/config.go',
        line: 137,
        function: '(*PathOptions).IsExplicitFile',
        excerpt: 'return len(o.LoadingRules.ExplicitPath) > 0',
      });
      const file = join(w.lab.stateDir, `${component}.cha.json`);
      writeFileSync(file, JSON.stringify(mutated));
      const r = prove(component, ['--map', file]);
      const wrong = r.flags
        .find((x) => x.flag === 'authentication-kubeconfig')!
        .sites.find((s) => s.ref.endsWith('/tools/clientcmd/config.go:137'))!;
      expect(wrong.status, JSON.stringify(wrong)).toBe('unset');
      expect(wrong.reason).toMatch(/not in the binary/);
      await unitBack(component);
    },
    PROVE_MS,
  );
});

// kube-apiserver beside the unit's, on port 16443 with its own audit log and no endpoint reconciler
// (as trace apply runs it); its gate is that instance's /readyz. Past the gate prove sends it
// SIGTERM and traces until it exits, so the reads of its shutdown count. The map subsumes reads that
// only format a check's message and ranks conditional reads last.
// Measured 2026-12-03 with both: 39 of 39 flags hit, 176 of 192 cited sites (91.7%; 166 of 201
// before), first citations 39 of 39; 5 sites first hit at shutdown, exit 0 after 1.2 s. With reads
// that only make a message no read site (the analyzer's msgonly.go): 173 of 188 (92.0%), 8 off:
// 173 of the 180 not ruled out (96.1%).
// The misses are conditional paths the unit's flags do not take (requestheader with allowed names,
// no --authorization-config, no automatic encryption-config reload, no peer proxy,
// --audit-log-maxsize not 0, ...) or code nothing calls in this process (the etcd client's
// GetCertificate), each named by prove; tlsCacheKey.String, a presenting method, is no read site now.
// Some are off, ruled out by the unit's own flags (decide.ts).
describe.each([['kube-apiserver', 'client-ca-file']] as const)(
  'hardwire flags prove --component %s',
  (component, signature) =>
    proveSuite(component, signature, /^readyz ok on 127\.0\.0\.1:16443$/, {
      sitesHit: 0.9,
      // ExternalAddress already set from --advertise-address: Complete's fallback to PublicAddress does not run.
      liveOff: [['k8s.io/apiserver@v0.36.3/pkg/server/config.go:727', 726]],
      beside: ['secure-port', 'audit-log-path', 'endpoint-reconciler-type'],
      // The watch drain of --shutdown-watch-termination-grace-period, and the pre-shutdown hook that
      // stops the kubernetes Service controller (its goroutine logs the line before it reads --advertise-address).
      shutdown: {
        sites: [681, 687, 689, 699]
          .map((l) => `k8s.io/apiserver@v0.36.3/pkg/server/genericapiserver.go:${l}`)
          .concat(
            'k8s.io/kubernetes@v1.36.3/pkg/controlplane/controller/kubernetesservice/controller.go:130',
          ),
        journal: [
          /Shutting down kubernetes service endpoint reconciler/,
          /Stopped listening on \S+:16443/,
        ],
      },
    }),
);

// trace apply (the capstone) on the same lab, before etcd stops the apiservers' store.
traceSuite(() => w);
// trace apply --webhook-reject: a create hardwire's webhook, on the host, rejects.
traceWebhookSuite(() => w);

// etcd last: while it runs under delve the apiservers have no store, and the Lease gates above need one.
// With one member prove boots it first: the apiserver, controller manager and scheduler stop, the
// data dir moves aside, the debug etcd bootstraps a new cluster in an empty one, and the data dir
// comes back (test/helpers/etcd-first-boot.ts reads the evidence on the host). The lab host has no
// default route: prove adds one through a bridge with no ports for the proof, so
// UpdateDefaultClusterFromName reads the URLs past its early return. Past its gate prove sends it
// SIGTERM: Close's deferred verify reads --data-dir. Its gate: the member healthy over mTLS.
// The analyzer ranks the reads that need another flag set (auto TLS, --config-file, discovery)
// after the others, so few of them are cited; the map still cites reads in branches a member with
// TLS by flags and no peers does not take (README), so its bar is lower than the 95%.
// Measured 2026-12-03: 113 of 135 sites, first citations 17 of 19, 1 site first hit at shutdown;
// on the map without message-only reads (msgonly.go) 118 of 133, 6 off (decide.ts), first citations 18 of 19.
describe.each([['etcd', 'data-dir']] as const)(
  'hardwire flags prove --component %s',
  (component, signature) => {
    const fb = firstBootEvidence(() => w);
    proveSuite(component, signature, /^healthy: /, {
      sitesHit: 0.83,
      arm: fb.arm,
      // UpdateDefaultClusterFromName past `if defaultHostname == ""`: the peer and client listen URLs, --name, defaultClientHost.
      defaultRoute: [1573, 1579, 1583, 1511].map(
        (l) => `go.etcd.io/etcd/server/v3@v3.6.8/embed/config.go:${l}`,
      ),
      firstBoot: {
        flag: 'initial-cluster-token',
        function: '(*Config).PeerURLsMapAndToken',
        guard: {
          ref: 'go.etcd.io/etcd/server/v3@v3.6.8/embed/etcd.go:163',
          text: 'if !isMemberInitialized(cfg) {',
        },
      },
      // Its interrupt handler runs Close, then sends itself SIGTERM again with the default action (osutil.HandleInterrupts): delve reports -15.
      shutdown: {
        sites: ['go.etcd.io/etcd/server/v3@v3.6.8/embed/etcd.go:431'],
        journal: [/closing etcd server/, /closed etcd server/],
        exitStatus: -15,
      },
      // Peers only (rafthttp's snapshot sender). (peer-client-cert-auth's first citation was the
      // log-only `if u.Scheme == "http"` branch of configurePeerListeners, no read site since msgonly.go.)
      firstMisses: ['initial-advertise-peer-urls'],
      // configFromFile runs only with --config-file, which the unit does not pass.
      conditional: [['initial-cluster', 'config-file', 'if cfg.configFile != "" {']],
      // With the default route prove adds: the no-default-host branch (1564) and the bodies the unit's
      // --initial-cluster (1579) and non-wildcard listen URL (1584) skip.
      liveOff: (
        [
          [1567, 1564],
          [1566, 1564],
          [1580, 1579],
          [1585, 1584],
        ] as const
      ).map(([l, g]) => [`go.etcd.io/etcd/server/v3@v3.6.8/embed/config.go:${l}`, g]),
    });
    fb.suite();

    // The live evidence is what decides: the same run's guard read with its sense flipped in the map
    // (the read needs `defaultHostname == "" || …` false) no longer keeps config.go:1567 out.
    it(
      'a guard whose sense is flipped in the map no longer keeps the read out: not hit, not off',
      async () => {
        const mutated = structuredClone(loadFlagMap(component));
        const site = mutated.flags
          .find((f) => f.name === 'name')!
          .consumedAt.find((c) => c.file === 'embed/config.go' && c.line === 1567)!;
        const guard = site.guards!.find((g) => g.at.endsWith('/embed/config.go:1564'))!;
        expect(guard.negated).toBeUndefined();
        guard.negated = true;
        const file = join(w.lab.stateDir, `${component}.flipped.json`);
        writeFileSync(file, JSON.stringify(mutated));
        const r = prove(component, ['--map', file]);
        const s = r.flags
          .find((f) => f.flag === 'name')!
          .sites.find((x) => x.ref.endsWith('/embed/config.go:1567'))!;
        expect([s.status, s.live], JSON.stringify(s)).toEqual(['not hit', undefined]);
        await unitBack(component);
      },
      PROVE_MS,
    );
  },
);
