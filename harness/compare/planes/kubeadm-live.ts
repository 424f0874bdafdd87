// The kubeadm plane, live. The lab has no kubelet or container runtime, so each static Pod's
// container command (command + args exactly as the manifest has them; its hostPath mounts are the
// same paths on the host) runs as a transient systemd unit, kubeadm-<name>, with the same
// v1.36.3 binaries and kubeadm's default etcd. Then kubeadm's control plane really serves: its
// live command lines, /readyz, Leases and a CIS scan can be read like any other plane's.
import { statSync } from 'node:fs';
import { ensureAll } from '../../../core/components/binaries/index.ts';
import { StepError } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/log.ts';
import type { Session } from '../../../core/transport/index.ts';
import { APISERVER_PORT } from '../../../lib/constants.ts';
import { showUnit } from '../../../lib/systemctl.ts';
import { orAbort, retry } from '../../../lib/retry.ts';
import type { Component, PlaneData } from '../types.ts';
import { COMPONENTS } from '../types.ts';

/** Start order: etcd before the apiserver, the apiserver before its clients. */
const ORDER: Component[] = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];

export const unitOf = (c: Component) => `kubeadm-${c}`;

/** The binaries the manifests name (kubeadm's images carry them on PATH), into /usr/local/bin. */
async function stage(s: Session, version: string, log: Logger): Promise<void> {
  const bins = await ensureAll(['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'], { kubernetesVersion: version, log });
  await s.writeFilesAtomic(bins.map((b) => ({ path: `/usr/local/bin/${b.name}`, mode: 0o755, data: { file: b.path, size: statSync(b.path).size } })));
}

async function waitReady(s: Session, address: string, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  let r = { code: 1, stdout: '', stderr: '' };
  return retry(async () => {
    r = await orAbort(s.exec(['curl', '-sS', '--max-time', '5', '--cacert', '/etc/kubernetes/pki/ca.crt', `https://${address}:${APISERVER_PORT}/readyz`], { allowFail: true }));
    if (r.code === 0 && r.stdout.trim() === 'ok') return Math.round(performance.now() - t0);
    throw new Error('not ready');
  }, {
    timeoutMs, intervalMs: 1000,
    onTimeout: async () => {
      const j = await s.exec(['journalctl', '-u', unitOf('kube-apiserver'), '--no-pager', '-n', '10', '-o', 'cat'], { allowFail: true });
      throw new StepError('compare-kubeadm', `kubeadm's kube-apiserver did not answer /readyz within ${timeoutMs / 1000} s`, { host: s.host.name, detail: [r.stdout, r.stderr, ...j.stdout.split('\n')] });
    },
  });
}

/**
 * Runs the manifests' commands, waits for /readyz, then reads each unit's /proc cmdline. The
 * manifest stays the plane's command line; the live one must equal it, or a note says where not.
 */
export async function runKubeadmLive(plane: PlaneData, s: Session, address: string, version: string, log: Logger): Promise<void> {
  let t0 = performance.now();
  await stage(s, version, log);
  await s.exec(['mkdir', '-p', '/var/lib/etcd']);
  for (const c of ORDER) {
    const argv = plane.commands[c]?.argv;
    if (!argv) throw new StepError('compare-kubeadm', `no ${c} manifest to run`, { host: s.host.name });
    const run = ['systemd-run', `--unit=${unitOf(c)}`, '--property=Restart=always', '--property=RestartSec=2', `--description=kubeadm static Pod ${c}, run as a unit (no kubelet here)`, '--', ...argv];
    const r = await s.exec(run, { allowFail: true });
    plane.steps.push({ step: `run /etc/kubernetes/manifests/${c}.yaml as unit ${unitOf(c)}`, argv: run, ms: 0, ok: r.code === 0, output: r.stderr.trim() });
    if (r.code !== 0) throw new StepError('compare-kubeadm', `systemd-run ${unitOf(c)} exited ${r.code}`, { host: s.host.name, detail: r.stderr.split('\n') });
  }
  plane.steps.push({ step: 'start the four units', ms: Math.round(performance.now() - t0), ok: true });
  t0 = performance.now();
  const readyMs = await waitReady(s, address, 180_000);
  plane.steps.push({ step: `kubeadm's kube-apiserver /readyz ok`, ms: readyMs, ok: true });
  const mismatched: string[] = [];
  for (const c of COMPONENTS) {
    const pid = Number((await showUnit(s, unitOf(c), ['MainPID'])).MainPID ?? 0);
    const live = (await s.exec(['cat', `/proc/${pid}/cmdline`], { allowFail: true })).stdout.split('\0').filter(Boolean);
    const manifest = plane.commands[c]!.argv;
    // systemd-run resolves argv[0] on PATH (/usr/local/bin/kube-scheduler), as a container's
    // runtime would not; the rest must be the manifest's, word for word.
    const same = live.length === manifest.length && live[0]?.split('/').pop() === manifest[0] && live.slice(1).every((a, i) => a === manifest[i + 1]);
    if (!same) mismatched.push(c);
    plane.live ??= {};
    plane.live[c] = { pid, argv: live, sameAsManifest: same };
    const proc = plane.processes.find((p) => p.name === c);
    if (proc) {
      proc.pid = pid;
      proc.state = `running here as systemd unit ${unitOf(c)} (pid ${pid})`;
    }
  }
  if (mismatched.length) plane.notes.push(`live command line differs from the manifest for: ${mismatched.join(', ')}`);
  plane.notes.push(`kubeadm's four static Pods run here as systemd units (kubeadm-<name>) with their manifests' command and args as written, because this machine has no kubelet or container runtime; the live /proc/<pid>/cmdline of each ${mismatched.length ? 'differs for some (see above)' : 'equals its manifest'}`);
}
