// The k0s plane. k0s must run for real: a k0s binary built without embedded binaries, the
// component binaries staged in its bin directory, `k0s controller` on a fresh lab host until its
// apiserver answers /readyz; then each supervised child's /proc cmdline, its PKI and process tree.
//
// Getting the k0s binary goes through components/binaries like every other binary (a release
// download, else a Go module build), or --k0s-binary PATH. When that fails, the plane is reported
// as not collected with the tool's own error as the reason. The run-on-a-host half below has not
// been exercised on a machine that had a k0s binary: treat it as untested.
import { dirname } from 'node:path';
import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { ensureAll, ensureBinary, type EnsuredBinary } from '../../components/binaries/index.ts';
import { StepError } from '../../lib/errors.ts';
import { certFacts } from '../x509.ts';
import { flagsOf, kubeconfigCert } from '../normalize.ts';
import type { ClusterParams, Component, PlaneCollector, PlaneData } from '../types.ts';
import { COMPONENTS, emptyPlane } from '../types.ts';
import type { Session } from '../../transport/index.ts';
import { APISERVER_PORT } from '../../lib/constants.ts';

const DATA = '/var/lib/k0s';

export interface K0sOptions {
  /** A k0s binary the user has (its version is checked against the pin). */
  binary?: string;
  lab: string;
  keep: boolean;
}

function errorText(err: unknown): string {
  const text = err instanceof StepError ? [err.message, ...err.detail.map((d) => d.trim())].filter(Boolean).join(' | ') : err instanceof Error ? err.message : String(err);
  return text.replace(/[.\s]+$/, '');
}

/** Tries every way hardwire has to get k0s; on failure, the reasons as the tools gave them. */
async function acquire(opts: K0sOptions, version: string): Promise<EnsuredBinary | { why: string }> {
  if (opts.binary) {
    try {
      return await ensureBinary('k0s', { kubernetesVersion: version, from: dirname(opts.binary) });
    } catch (err) {
      return { why: `--k0s-binary ${opts.binary}: ${errorText(err)}` };
    }
  }
  const why: string[] = [];
  for (const source of ['fetch', 'build'] as const) {
    try {
      return await ensureBinary('k0s', { kubernetesVersion: version, source });
    } catch (err) {
      why.push(`${source === 'fetch' ? 'release download' : 'Go module build'}: ${errorText(err)}`);
    }
  }
  return { why: `no k0s binary: ${why.join('; ')}. Pass --k0s-binary PATH (a k0s built without embedded binaries) to collect this plane` };
}

export function k0sConfig(p: ClusterParams): string {
  return stringify({
    apiVersion: 'k0s.k0sproject.io/v1beta1',
    kind: 'ClusterConfig',
    metadata: { name: p.clusterName },
    spec: {
      api: { address: p.advertiseAddress, port: APISERVER_PORT, ...(p.extraSANs.length ? { sans: p.extraSANs } : {}) },
      network: { serviceCIDR: p.serviceCIDR, podCIDR: p.podCIDR, clusterDomain: p.dnsDomain },
      storage: { type: 'etcd' },
    },
  });
}

/** File roles from the command lines: the file a flag names is the cert that flag is for. */
const ROLE_FLAGS: Partial<Record<Component, Record<string, string>>> = {
  'kube-apiserver': {
    'tls-cert-file': 'apiserver', 'client-ca-file': 'ca', 'kubelet-client-certificate': 'apiserver-kubelet-client',
    'etcd-certfile': 'apiserver-etcd-client', 'etcd-cafile': 'etcd-ca', 'proxy-client-cert-file': 'front-proxy-client',
    'requestheader-client-ca-file': 'front-proxy-ca',
  },
  etcd: { 'cert-file': 'etcd-server', 'peer-cert-file': 'etcd-peer', 'trusted-ca-file': 'etcd-ca' },
  'kube-controller-manager': { kubeconfig: 'kubeconfig/controller-manager' },
  'kube-scheduler': { kubeconfig: 'kubeconfig/scheduler' },
};

/** kubeadm's file for a role: etcd-server -> etcd/server.crt, kubeconfig/admin -> admin.conf. */
function kubeadmFile(role: string): string {
  if (role.startsWith('kubeconfig/')) return `<conf>/${role.slice('kubeconfig/'.length)}.conf`;
  return `<pki>/${role.startsWith('etcd-') ? `etcd/${role.slice(5)}` : role}.crt`;
}

async function exec(plane: PlaneData, s: Session, argv: string[], step: string): Promise<string> {
  const t0 = performance.now();
  const r = await s.exec(argv, { allowFail: true, timeoutMs: 60_000 });
  plane.steps.push({ step, argv, ms: Math.round(performance.now() - t0), ok: r.code === 0, output: `${r.stdout}${r.stderr}`.trim().split('\n').slice(-4).join('\n') });
  if (r.code !== 0) throw new StepError('compare-k0s', `${argv.join(' ')} exited ${r.code}`, { host: s.host.name, detail: r.stderr.split('\n').slice(-10) });
  return r.stdout;
}

async function runOnHost(plane: PlaneData, k0s: EnsuredBinary, opts: K0sOptions, ctx: Parameters<PlaneCollector['collect']>[0]): Promise<void> {
  const lab = await import('../../lab/index.ts');
  const labOpts = { name: opts.lab, stateDir: ctx.stateDir, log: ctx.log };
  await lab.labDown(labOpts);
  const info = await lab.labUp({ ...labOpts, hosts: 1 });
  const s = await lab.labConnect(info.hosts[0]!.name, labOpts);
  plane.host = `${opts.lab}/${info.hosts[0]!.name}`;
  try {
    const parts = await ensureAll(['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'], { kubernetesVersion: ctx.params.kubernetesVersion });
    await s.exec(['mkdir', '-p', `${DATA}/bin`, '/etc/k0s']);
    await s.writeFileAtomic('/usr/local/bin/k0s', readFileSync(k0s.path), { mode: 0o755 });
    for (const b of parts) await s.writeFileAtomic(`${DATA}/bin/${b.name}`, readFileSync(b.path), { mode: 0o755 });
    await s.writeFileAtomic('/etc/k0s/k0s.yaml', k0sConfig(ctx.params), { mode: 0o600 });
    const disabled = ['konnectivity-server', 'metrics-server', 'kube-proxy', 'coredns', 'csr-approver', 'helm', 'autopilot'];
    plane.notes.push(`--disable-components ${disabled.join(',')}: they need binaries or a worker this lab host does not have`);
    await exec(plane, s, ['systemd-run', '--unit=k0scontroller', '/usr/local/bin/k0s', 'controller', '--config=/etc/k0s/k0s.yaml', `--disable-components=${disabled.join(',')}`], 'start k0s controller');
    const deadline = Date.now() + 180_000;
    for (;;) {
      const r = await s.exec(['/usr/local/bin/k0s', 'kubectl', 'get', '--raw', '/readyz'], { allowFail: true });
      if (r.code === 0 && r.stdout.trim() === 'ok') break;
      if (Date.now() > deadline) throw new StepError('compare-k0s', 'k0s apiserver did not answer /readyz within 180 s', { host: s.host.name, detail: r.stderr.split('\n').slice(-10) });
      await new Promise((res) => setTimeout(res, 2000));
    }
    const main = Number((await exec(plane, s, ['systemctl', 'show', '-p', 'MainPID', '--value', 'k0scontroller'], 'k0s MainPID')).trim());
    plane.processes.push({ name: 'k0s controller', kind: 'supervisor', parent: 'systemd (PID 1)', pid: main, source: `/proc/${main}`, details: {} });
    const children = (await exec(plane, s, ['cat', `/proc/${main}/task/${main}/children`], 'k0s children')).trim().split(/\s+/).filter(Boolean).map(Number);
    for (const pid of children) {
      const argv = (await s.exec(['cat', `/proc/${pid}/cmdline`], { allowFail: true })).stdout.split('\0').filter(Boolean);
      const name = (argv[0] ?? '').split('/').pop() ?? String(pid);
      plane.processes.push({ name, kind: 'child', parent: 'k0s controller', pid, source: `/proc/${pid}/cmdline`, details: { argv0: argv[0] ?? '' } });
      if ((COMPONENTS as readonly string[]).includes(name)) plane.commands[name as Component] = { argv, source: `/proc/${pid}/cmdline` };
    }
    plane.notes.push(`k0s source at ${k0s.version} is not available here, so the controllers k0s runs in-process are not listed`);
    // Roles from the flags that name each file; then the PKI itself.
    const roleOfPath = new Map<string, string>();
    for (const [c, flagsRole] of Object.entries(ROLE_FLAGS)) {
      const f = flagsOf(plane.commands[c as Component]?.argv ?? []);
      for (const [flag, role] of Object.entries(flagsRole)) {
        const p = f.get(flag);
        if (!p) continue;
        roleOfPath.set(p, role);
        plane.pathTokens.push([p, kubeadmFile(role)]);
        if (p.endsWith('.crt')) plane.pathTokens.push([p.replace(/\.crt$/, '.key'), kubeadmFile(role).replace(/\.crt$/, '.key')]);
      }
    }
    plane.pathTokens.push([`${DATA}/pki/`, '<pki>/'], [`${DATA}/etcd`, '<etcd-data>'], [`${DATA}/`, '<data>/']);
    const files = (await exec(plane, s, ['find', `${DATA}/pki`, '-type', 'f', '(', '-name', '*.crt', '-o', '-name', '*.conf', ')'], 'list k0s PKI')).trim().split('\n').filter(Boolean).sort();
    for (const path of files) {
      const text = (await s.readFile(path)).toString('utf8');
      const role = roleOfPath.get(path) ?? `k0s:${path.slice(`${DATA}/pki/`.length).replace(/\.(crt|conf)$/, '')}`;
      if (path.endsWith('.crt')) plane.certs.push({ role, path, kind: 'cert', facts: certFacts(text) });
      else { const c = kubeconfigCert(text, path, role); if (c) plane.certs.push(c); }
    }
    plane.version = k0s.version;
    plane.why = `real k0s ${k0s.version} controller on fresh lab host ${plane.host}`;
  } finally {
    await s.close();
    if (!opts.keep) await lab.labDown(labOpts);
  }
}

export function k0sCollector(opts: K0sOptions): PlaneCollector {
  return {
    plane: 'k0s',
    async collect(ctx) {
      const t0 = performance.now();
      const got = await acquire(opts, ctx.params.kubernetesVersion);
      if ('why' in got) {
        const plane = emptyPlane('k0s', got.why);
        plane.steps.push({ step: 'acquire k0s binary', ms: Math.round(performance.now() - t0), ok: false, output: got.why });
        return plane;
      }
      const plane = emptyPlane('k0s', '', true);
      try {
        await runOnHost(plane, got, opts, ctx);
      } catch (err) {
        return { ...plane, collected: false, why: `k0s ${got.version} did not come up on a lab host: ${errorText(err)}` };
      }
      return plane;
    },
  };
}
