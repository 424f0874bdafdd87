// End to end on the lab: hardwire wires a 1-host lab cluster, then "hardwire compare" runs the real
// kubeadm v1.36.3 phases on a fresh lab host and compares. k0s cannot be obtained on this machine,
// so the command must fail without --allow-partial and say why. The HTML report is opened in
// headless Chromium. Assertions hold known facts of the pinned version, not whole tables.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { hardwire } from './helpers/cli.ts';
import { findFlag } from '../flags/map.ts';
import { testLab, type TestLab } from './helpers/lab.ts';
import { labDown } from '../lab/index.ts';
import { execStartArgv, flagsOf, normalizeValue, KUBEADM_TOKENS, roleOf } from '../compare/normalize.ts';
import type { CompareReport } from '../compare/types.ts';

let lab: TestLab;
let state: string;
let out: string;
let report: CompareReport;
let partial: { code: number; stdout: string; stderr: string };
const KUBEADM_LAB = 'cmptest-kubeadm';

beforeAll(async () => {
  lab = await testLab('cmptest', 1);
  state = join(lab.stateDir, 'state');
  out = mkdtempSync(join(tmpdir(), 'hardwire-compare-out-'));
  const w = hardwire(['wire', '--inventory', lab.info.inventory, '--state-dir', state, '--json'], { timeoutMs: 600_000 });
  expect(w.code, w.stderr.slice(-3000)).toBe(0);
  partial = hardwire(['compare', '--inventory', lab.info.inventory, '--state-dir', state, '--kubeadm-lab', KUBEADM_LAB, '--allow-partial',
    '--json', join(out, 'r.json'), '--md', join(out, 'r.md'), '--html', join(out, 'r.html')], { timeoutMs: 600_000 });
  expect(partial.code, partial.stderr.slice(-3000)).toBe(0);
  report = JSON.parse(readFileSync(join(out, 'r.json'), 'utf8')) as CompareReport;
});

afterAll(async () => {
  await labDown({ name: KUBEADM_LAB, stateDir: state }).catch(() => undefined);
  await lab?.down();
  if (out) rmSync(out, { recursive: true, force: true });
});

const flag = (c: keyof CompareReport['components'], name: string) => report.components[c].flags.find((f) => f.name === name);

describe('hardwire compare on the lab', () => {
  it('collects hardwire live and kubeadm for real; k0s is not collected and says why', () => {
    expect(report.kubernetesVersion).toBe('v1.36.3');
    expect(report.planes.hardwire).toMatchObject({ collected: true, mode: 'live' });
    expect(report.planes.kubeadm).toMatchObject({ collected: true, version: 'v1.36.3' });
    expect(report.planes.kubeadm.steps.map((s) => s.step)).toEqual(expect.arrayContaining([
      'kubeadm init phase certs all', 'kubeadm init phase kubeconfig all', 'kubeadm init phase etcd local', 'kubeadm init phase control-plane all',
    ]));
    expect(report.planes.k0s.collected).toBe(false);
    expect(report.planes.k0s.why).toMatch(/k0s/);
    expect(report.planes.k0s.why).toMatch(/403 Forbidden|cannot reach|ENOTFOUND/);
    expect(report.k0sCollapse).toMatch(/^k0s could not be collected/);
    // Live command lines, read from /proc, and the lab's kubeadm host is gone afterwards.
    for (const c of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const) {
      expect(report.components[c].sources.hardwire).toMatch(/^\/proc\/\d+\/cmdline on node1$/);
      expect(report.components[c].sources.kubeadm).toBe(`/etc/kubernetes/manifests/${c}.yaml (containers[0].command)`);
    }
    expect(existsSync(join(state, 'lab', KUBEADM_LAB))).toBe(false);
  });

  it('flag matrix holds known facts of kubeadm v1.36.3, with flag-map citations', () => {
    const boot = flag('kube-apiserver', 'enable-bootstrap-token-auth')!;
    expect(boot.values.kubeadm).toBe('true');
    expect(boot.values.k0s).toBeNull();
    expect(boot.registeredAt?.url).toMatch(/^https:\/\/github\.com\/kubernetes\/kubernetes\/blob\/v1\.36\.3\//);
    expect(boot.consumedAt.length).toBeGreaterThan(0);
    expect(boot.reasons.find((r) => r.plane === 'kubeadm')?.url).toMatch(/cmd\/kubeadm\/app\/phases\/controlplane\/manifests\.go#L\d+$/);
    // Same parameters in, so these agree exactly.
    expect(flag('kube-apiserver', 'service-cluster-ip-range')).toMatchObject({ class: 'same', values: { hardwire: '10.96.0.0/12', kubeadm: '10.96.0.0/12' } });
    expect(flag('kube-controller-manager', 'cluster-name')?.values.kubeadm).toBe('cmptest');
    expect(flag('kube-controller-manager', 'cluster-name')?.class).toBe('same');
    // Path normalisation: identical layouts compare equal, raw value kept.
    const tls = flag('kube-apiserver', 'tls-cert-file')!;
    expect(tls).toMatchObject({ class: 'same', values: { hardwire: '<pki>/apiserver.crt', kubeadm: '<pki>/apiserver.crt' }, raw: { kubeadm: '/etc/kubernetes/pki/apiserver.crt' } });
    // A real difference, with both sides' values from the tools.
    const etcdServers = flag('kube-apiserver', 'etcd-servers')!;
    expect(etcdServers.class).toBe('differs');
    expect(etcdServers.values.kubeadm).toBe('https://127.0.0.1:2379');
    expect(etcdServers.reason).toMatch(/hardwire: /);
    expect(flag('kube-controller-manager', 'controllers')?.values.kubeadm).toContain('bootstrapsigner');
    for (const c of Object.values(report.components)) expect(c.flags.length).toBeGreaterThan(3);
  });

  it('flag-map coverage: every flag hardwire or the real kubeadm passes has a registration and a read site', () => {
    const gaps: string[] = [];
    let n = 0;
    for (const c of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const) {
      for (const f of report.components[c].flags) {
        if (f.values.hardwire === null && f.values.kubeadm === null) continue;
        n++;
        const entry = findFlag(c, f.name);
        // The only allowed exception: a flag the map records as genuinely never read.
        if (entry?.readBy === 'none') continue;
        if (!f.inFlagMap || !f.registeredAt || f.consumedAt.length === 0) gaps.push(`${c} --${f.name}`);
      }
    }
    console.log(`flag-map coverage of flags hardwire or kubeadm pass: ${n - gaps.length}/${n}`);
    expect(n).toBeGreaterThan(60);
    expect(gaps).toEqual([]);
  });

  it('cert matrix: both apiserver serving certs cover the first service IP; unmatched roles are shown', () => {
    const api = report.certs.find((c) => c.role === 'apiserver')!;
    for (const p of ['hardwire', 'kubeadm'] as const) {
      expect(api.planes[p]?.sans).toContain(`IP:${report.params.firstServiceIp}`);
      expect(api.planes[p]?.extKeyUsage).toEqual(['serverAuth']);
      expect(api.planes[p]?.keyAlgorithm).toMatch(/^(RSA-\d+|EC-)/);
    }
    expect(api.planes.k0s).toBeNull();
    const kubelet = report.certs.find((c) => c.role === 'kubeconfig/kubelet')!;
    expect(kubelet.planes.hardwire).toBeNull();
    expect(kubelet.planes.kubeadm?.o).toEqual(['system:nodes']);
    expect(kubelet.matched).toBe('some');
    const admin = report.certs.find((c) => c.role === 'kubeconfig/super-admin')!;
    expect(admin.planes.kubeadm?.o).toEqual(['system:masters']);
  });

  it('process model: four systemd units vs kubelet plus four static Pods', () => {
    const units = report.processes.hardwire;
    expect(units.map((u) => u.name).sort()).toEqual(['etcd.service', 'kube-apiserver.service', 'kube-controller-manager.service', 'kube-scheduler.service']);
    for (const u of units) expect(u.pid).toBeGreaterThan(1);
    expect(report.processes.kubeadm.map((p) => `${p.kind}:${p.name}`)).toEqual(['kubelet:kubelet', 'static-pod:etcd', 'static-pod:kube-apiserver', 'static-pod:kube-controller-manager', 'static-pod:kube-scheduler']);
    expect(report.processes.k0s).toEqual([]);
  });

  it('stdout has a summary; Markdown is written; private keys appear nowhere', () => {
    expect(partial.stdout).toMatch(/kube-apiserver: \d+ same, \d+ differ/);
    const md = readFileSync(join(out, 'r.md'), 'utf8');
    expect(md).toMatch(/\| --enable-bootstrap-token-auth \| — \| true \| — \| partial \|/);
    for (const f of ['r.json', 'r.md', 'r.html']) expect(readFileSync(join(out, f), 'utf8')).not.toMatch(/PRIVATE KEY|client-key-data/);
  });

  it('without --allow-partial the command fails and says k0s could not be collected and why', () => {
    const r = hardwire(['compare', '--inventory', lab.info.inventory, '--state-dir', state, '--kubeadm-lab', KUBEADM_LAB, '--no-live'], { timeoutMs: 600_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error: compare: k0s could not be collected/);
    expect(r.stderr).toMatch(/k0s: no k0s binary: .*(403 Forbidden|cannot reach)/);
  });

  it('bad input is exit 2', () => {
    expect(hardwire(['compare', '--kubeadm-lab', 'Not_A_Label']).code).toBe(2);
    expect(hardwire(['compare', '--inventory', lab.info.inventory, '--host', 'nope', '--state-dir', state]).code).toBe(2);
  });

  it('the HTML report renders the planes and the matrices in headless Chromium', async () => {
    const userDir = mkdtempSync(join(tmpdir(), 'hardwire-chromium-'));
    let browser: BrowserContext | undefined;
    try {
      browser = await chromium.launchPersistentContext(userDir, {
        executablePath: '/usr/bin/chromium',
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
      const page = await browser.newPage();
      const requests: string[] = [];
      page.on('request', (req) => { if (!req.url().startsWith('file:')) requests.push(req.url()); });
      await page.goto(`file://${join(out, 'r.html')}`);
      expect(await page.locator('#planes tr').count()).toBe(3);
      expect(await page.locator('#planes tr[data-plane=k0s]').innerText()).toMatch(/not collected/);
      for (const c of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']) {
        const rows = page.locator(`table[data-component="${c}"] tbody tr`);
        expect(await rows.count()).toBe(report.components[c as keyof CompareReport['components']].flags.length);
      }
      expect(await page.locator('#certs tbody tr').count()).toBe(report.certs.length);
      expect(await page.locator('tr[data-flag="etcd-servers"].differs td.d').count()).toBeGreaterThan(0);
      expect(await page.locator('tr[data-flag="enable-bootstrap-token-auth"] a[href^="https://github.com/kubernetes/kubernetes/blob/v1.36.3/"]').count()).toBeGreaterThan(0);
      expect(await page.locator('section.proc').count()).toBe(3);
      // Sorting: a click on "class" puts "differs" rows first.
      const table = page.locator('table[data-component="kube-apiserver"]');
      await table.locator('th', { hasText: 'class' }).click();
      expect(await table.locator('tbody tr').first().locator('td').nth(4).innerText()).toBe('differs');
      expect(requests).toEqual([]); // self-contained
    } finally {
      await browser?.close();
      rmSync(userDir, { recursive: true, force: true });
    }
  });
});

describe('normalisation (pure)', () => {
  it('maps paths to roles and tokens, parses flags and unit ExecStart lines', () => {
    expect(roleOf('pki/etcd/server.crt')).toBe('etcd-server');
    expect(roleOf('pki/apiserver.crt')).toBe('apiserver');
    expect(roleOf('super-admin.conf')).toBe('kubeconfig/super-admin');
    expect(normalizeValue('/etc/kubernetes/pki/ca.crt', KUBEADM_TOKENS)).toBe('<pki>/ca.crt');
    expect(normalizeValue('/var/lib/k0s/pki/ca.crt', [['/var/lib/k0s/pki/', '<pki>/']])).toBe('<pki>/ca.crt');
    expect(normalizeValue('/etc/kubernetes/scheduler.conf', KUBEADM_TOKENS)).toBe('<conf>/scheduler.conf');
    expect([...flagsOf(['x', '--a=1', '--b', '2', '--c', '-d=x=y'])]).toEqual([['a', '1'], ['b', '2'], ['c', 'true'], ['d', 'x=y']]);
    const unit = 'ExecStart=/usr/local/bin/x \\\n  # --a: why\n  --a=1 \\\n  --b="two words" \\\n  --c=100%%\nRestart=always\n';
    expect(execStartArgv(unit)).toEqual(['/usr/local/bin/x', '--a=1', '--b=two words', '--c=100%']);
  });
});
