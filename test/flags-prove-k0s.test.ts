// `hardwire flags prove --flags-of k0s` on one wired 1-host lab: k0s's kube-apiserver flags, read
// live from a k0s controller that prove starts on a lab host of its own (and removes), run beside
// hardwire's unit. What the test reads on its own: the flags k0s's source always passes (the args
// literal of APIServer.Start in k0s's tree, from which this k0s was built), each of which the report
// must hold; each file a flag ran with, on the host, holding the certificate of the role k0s's file
// holds; each hit file:line re-opened in the module cache, inside the function delve named.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hardwire } from './helpers/cli.ts';
import { wiredTestLab, type WiredLab } from './helpers/lab.ts';
import { independentProblem, selectorOf } from './helpers/prove-evidence.ts';
import { loadFlagMap } from '../core/flags/map.ts';
import { cacheDir } from '../lib/paths.ts';
import type { ProveReport } from '../harness/prove/index.ts';

const PROVE_MS = 900_000;
let w: WiredLab;
let report: ProveReport;

beforeAll(async () => {
  w = await wiredTestLab('w1', 1);
});

afterAll(async () => {
  await w?.lab.down();
});

/** The flags k0s's APIServer.Start always passes: the keys of its `args := stringmap.StringMap{…}` literal. */
function k0sSourceFlags(version: string): string[] {
  const src = readFileSync(
    join(cacheDir(), 'gosrc', `k0s-${version}`, 'pkg/component/controller/apiserver.go'),
    'utf8',
  ).split('\n');
  const start = src.findIndex((l) => /^\s*args := stringmap\.StringMap\{$/.test(l));
  expect(start).toBeGreaterThan(0);
  const out: string[] = [];
  for (let i = start + 1; !/^\s*\}$/.test(src[i]!); i++) {
    const m = /^\s*"([\w-]+)":/.exec(src[i]!);
    if (m) out.push(m[1]!);
  }
  return out;
}

async function onHost(argv: string[]): Promise<{ code: number; stdout: string }> {
  const s = await w.lab.ssh(w.lab.info.hosts[0]!.name);
  try {
    return await s.exec(argv, { allowFail: true });
  } finally {
    await s.close();
  }
}

describe('flags prove --flags-of k0s: kube-apiserver', () => {
  it(
    "runs the debug kube-apiserver beside the unit with the flags a live k0s controller passed, each flag k0s's source always sets among them",
    async () => {
      const r = hardwire(
        [
          'flags',
          'prove',
          '--component',
          'kube-apiserver',
          '--flags-of',
          'k0s',
          '--inventory',
          w.inv,
          '--state-dir',
          w.state,
          '--json',
        ],
        { timeoutMs: PROVE_MS },
      );
      expect(r.code, r.stderr.slice(-3000)).toBe(0);
      report = JSON.parse(r.stdout) as ProveReport;
      expect(report.flagsOf?.tool).toBe('k0s');
      expect(report.flagsOf!.source).toMatch(/^\/proc\/\d+\/cmdline on the k0s controller/);
      const passed = report.flagsOf!.flags.map((t) => t.flag);
      const always = k0sSourceFlags(report.flagsOf!.version);
      expect(always.length).toBeGreaterThan(20);
      for (const f of always)
        expect(passed, `--${f}, which k0s's APIServer.Start always sets`).toContain(f);
      // k0s's lab is gone again.
      expect(existsSync(join(w.state, 'lab', 'k0s-flags'))).toBe(false);
      const c = report.counts;
      console.log(
        `kube-apiserver (k0s's flags): flags ${c.hit}/${c.flags} hit (${c.notProvable} not provable), sites ${c.sitesHit}/${c.sites} hit, first citations ${report.flags.filter((f) => f.sites[0]?.status === 'hit').length}/${report.flags.length}, ${report.seconds.total.toFixed(1)} s`,
      );
    },
    PROVE_MS,
  );

  it("hits every flag it ran, and reports konnectivity's egress selector config as not provable with k0s's value", () => {
    for (const t of report.flagsOf!.flags.filter((x) => x.run !== undefined)) {
      const row = report.flags.find((f) => f.flag === t.flag);
      expect(row?.verdict, `--${t.flag}: ${row?.reason ?? ''}`).toBe('hit');
    }
    const egress = report.flags.find((f) => f.flag === 'egress-selector-config-file')!;
    expect(egress).toMatchObject({
      verdict: 'not provable',
      value: '/var/lib/k0s/konnectivity.conf',
    });
    expect(egress.reason).toMatch(/^not provable on hardwire's host: /);
    expect(report.argv.some((a) => a.startsWith('--egress-selector-config-file='))).toBe(false);
  });

  it("ran k0s's files as hardwire's files of the same role, on the host, and its address as the host's", async () => {
    const run = new Map(report.flagsOf!.flags.map((t) => [t.flag, t]));
    expect(run.get('advertise-address')!.run).toBe(w.lab.info.hosts[0]!.address);
    expect(run.get('advertise-address')!.original).not.toBe(w.lab.info.hosts[0]!.address);
    const cn: Record<string, string> = {
      'tls-cert-file': 'kube-apiserver',
      'client-ca-file': 'kubernetes',
      'etcd-certfile': 'kube-apiserver-etcd-client',
      'proxy-client-cert-file': 'front-proxy-client',
      'kubelet-client-certificate': 'kube-apiserver-kubelet-client',
    };
    for (const t of report.flagsOf!.flags.filter(
      (x) => x.original.startsWith('/') && x.run !== undefined,
    )) {
      expect(t.original, `--${t.flag}`).toMatch(/^\/var\/lib\/k0s\//);
      expect(report.argv, `--${t.flag}`).toContain(`--${t.flag}=${t.run}`);
      expect((await onHost(['test', '-e', t.run!])).code, `--${t.flag}: ${t.run}`).toBe(0);
      if (cn[t.flag])
        expect(
          new X509Certificate((await onHost(['cat', t.run!])).stdout).subject,
          `--${t.flag}`,
        ).toContain(`CN=${cn[t.flag]}`);
    }
    expect(Object.keys(cn).every((f) => run.get(f)?.run)).toBe(true);
  });

  it('each hit site re-opened in the module cache lies in the function delve named', () => {
    const map = loadFlagMap('kube-apiserver');
    const hits = report.flags.flatMap((f) =>
      f.sites.filter((s) => s.status === 'hit').map((s) => [f.flag, s] as const),
    );
    expect(hits.length).toBeGreaterThan(100);
    for (const [flag, s] of hits) {
      const sel = selectorOf(map, flag, s.ref);
      if (sel.startsWith('"')) continue;
      expect(independentProblem(s, sel), `--${flag} ${s.ref}`).toBeUndefined();
    }
  });

  it('leaves the unit running and no scratch dir behind', async () => {
    expect((await onHost(['systemctl', 'is-active', 'kube-apiserver.service'])).stdout.trim()).toBe(
      'active',
    );
    expect(
      (
        await onHost(['sh', '-c', 'ls -d /var/tmp/hardwire-prove.* 2>/dev/null || true'])
      ).stdout.trim(),
    ).toBe('');
  });
});

describe('flags prove --flags-of k0s: etcd', () => {
  let etcd: ProveReport;

  it(
    "runs the debug etcd in place of the unit with k0s's flags; the jwt token keys hardwire does not make are not run, and say so",
    async () => {
      const r = hardwire(
        [
          'flags',
          'prove',
          '--component',
          'etcd',
          '--flags-of',
          'k0s',
          '--inventory',
          w.inv,
          '--state-dir',
          w.state,
          '--json',
        ],
        { timeoutMs: PROVE_MS },
      );
      expect(r.code, r.stderr.slice(-3000)).toBe(0);
      etcd = JSON.parse(r.stdout) as ProveReport;
      expect(etcd.exited).toBeUndefined();
      const run = new Map(etcd.flagsOf!.flags.map((t) => [t.flag, t]));
      expect(run.get('auth-token')).toMatchObject({
        notProvable: expect.stringMatching(/jwt\.(pub|key)/),
      });
      expect(run.get('auth-token')!.original).toMatch(
        /^jwt,pub-key=\/var\/lib\/k0s\/pki\/etcd\/jwt\.pub,/,
      );
      expect(etcd.argv.some((a) => a.startsWith('--auth-token='))).toBe(false);
      expect(run.get('data-dir')).toMatchObject({
        original: '/var/lib/k0s/etcd',
        run: '/var/lib/etcd',
      });
      // Where hardwire's own unit reads the server cert (its credential), read from the unit here.
      const unit = (await onHost(['cat', '/etc/systemd/system/etcd.service'])).stdout;
      expect(unit).toContain(`--cert-file=${run.get('cert-file')!.run}`);
      expect(unit).toContain(`--peer-key-file=${run.get('peer-key-file')!.run}`);
      const c = etcd.counts;
      console.log(
        `etcd (k0s's flags): flags ${c.hit}/${c.flags} hit (${c.notProvable} not provable), sites ${c.sitesHit}/${c.sites} hit, first citations ${etcd.flags.filter((f) => f.sites[0]?.status === 'hit').length}/${etcd.flags.length}, ${etcd.seconds.total.toFixed(1)} s`,
      );
    },
    PROVE_MS,
  );

  it('each hit site lies in the function delve named; etcd.service runs again', async () => {
    const map = loadFlagMap('etcd');
    const hits = etcd.flags.flatMap((f) =>
      f.sites.filter((s) => s.status === 'hit').map((s) => [f.flag, s] as const),
    );
    expect(hits.length).toBeGreaterThan(50);
    for (const [flag, s] of hits) {
      const sel = selectorOf(map, flag, s.ref);
      if (!sel.startsWith('"'))
        expect(independentProblem(s, sel), `--${flag} ${s.ref}`).toBeUndefined();
    }
    expect((await onHost(['systemctl', 'is-active', 'etcd.service'])).stdout.trim()).toBe('active');
  });
});
