// The real `kubeadm init`, every phase, on the host kubeadm-node.ts prepared; then what it left
// running is read back: each static Pod's container (`crictl ps`, run by the kubelet) and its
// /proc argv against the manifest, the mirror Pods from the API, the kubelet's flags and config,
// and containerd's journal and image list (nothing pulled).
import { stringify } from 'yaml';
import { StepError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { orAbort, retry } from '../../lib/retry.ts';
import type { Session } from '../../core/transport/index.ts';
import { showUnit } from '../../core/transport/systemctl.ts';
import type { Component, KubeadmRun, PlaneData } from './types.ts';
import { KUBE_PROXY_IN_A_LAB_HOST } from '../../core/components/models/kube-proxy.ts';
import { configYaml } from '../../core/components/models/config-file.ts';
import { COMPONENTS } from './types.ts';
import { criContainers, CRI_ENDPOINT } from './crictl.ts';

export const INIT_CONFIG = '/root/hardwire-compare/kubeadm.yaml';
const ADMIN = '/etc/kubernetes/admin.conf';

/**
 * The KubeletConfiguration document of kubeadm.yaml: only what this machine needs, each with its
 * reason (the same findings as hardwire's own kubelet, components/models/kubelet.ts). kubeadm
 * merges it into its defaults and writes /var/lib/kubelet/config.yaml in its kubelet-start phase.
 */
export const KUBELET_NEEDS: { key: string; value: unknown; why: string }[] = [
  {
    key: 'failCgroupV1',
    value: false,
    why: 'kubelet v1.36 refuses cgroup v1 unless false (pkg/kubelet/apis/config/validation/validation_linux.go:35), and this machine has only v1 controllers',
  },
  {
    key: 'cgroupDriver',
    value: 'cgroupfs',
    why: "kubeadm defaults to systemd; the machine's PID 1 is not systemd and the node's systemd does not own the v1 hierarchies (docs/workers-spike.md); containerd's runc runs SystemdCgroup = false to match",
  },
  {
    key: 'failSwapOn',
    value: false,
    why: "lab hosts share the machine's swap; the kubelet otherwise refuses to start",
  },
];

/** Preflight checks that cannot pass in a lab host, by kubeadm's check name, with the reason. */
export const IGNORED_PREFLIGHT: { name: string; why: string }[] = [
  // kubeadm's own message: "To explicitly enable cgroups v1 support for kubelet v1.35 or newer, you must set the kubelet
  // configuration option 'FailCgroupV1' to 'false'. You must also explicitly skip this validation."
  {
    name: 'SystemVerification',
    why: 'this machine has cgroup v1 only; kubeadm fails the check on cgroup v1 even with failCgroupV1: false and asks to skip it explicitly (KEP 5573)',
  },
];

/** The kubeadm.yaml documents after InitConfiguration and ClusterConfiguration. */
export function kubeletDocument(): string {
  const lines = ['apiVersion: kubelet.config.k8s.io/v1beta1', 'kind: KubeletConfiguration'];
  for (const n of KUBELET_NEEDS) lines.push(`# ${n.why}`, stringify({ [n.key]: n.value }).trim());
  return `${lines.join('\n')}\n`;
}

/**
 * The KubeProxyConfiguration document: what kube-proxy needs in a lab host, the same fields and
 * reasons as hardwire's own worker (components/models/kube-proxy.ts). kubeadm fills in the rest
 * (bindAddress, clusterCIDR from podSubnet, clientConnection.kubeconfig:
 * k8s.io/kubernetes@v1.36.3/cmd/kubeadm/app/componentconfigs/kubeproxy.go:101) and puts it in the
 * kube-proxy ConfigMap its DaemonSet mounts. Without conntrack.maxPerCore: 0 kube-proxy's platformSetup
 * (k8s.io/kubernetes@v1.36.3/cmd/kube-proxy/app/server_linux.go:68) writes nf_conntrack_max
 * (k8s.io/kubernetes@v1.36.3/pkg/proxy/conntrack/sysctls.go:60-80, 111) and exits: "permission denied",
 * /proc/sys is read-only in a lab host.
 */
export function kubeProxyDocument(): string {
  return configYaml(
    {
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      comment:
        "kube-proxy in a lab host, as hardwire's workers run it (components/models/kube-proxy.ts).",
    },
    KUBE_PROXY_IN_A_LAB_HOST,
  );
}

/** The InitConfiguration's nodeRegistration for this host. */
export function nodeRegistration(name: string, address: string): Record<string, unknown> {
  return {
    name,
    criSocket: CRI_ENDPOINT,
    // Lab hosts have no default route: the kubelet would find no address of its own.
    kubeletExtraArgs: [{ name: 'node-ip', value: address }],
    ...(IGNORED_PREFLIGHT.length
      ? { ignorePreflightErrors: IGNORED_PREFLIGHT.map((c) => c.name) }
      : {}),
  };
}

/** Splits kubeadm's output into phases by its "[phase]" prefixes, each line stamped with bash's $EPOCHREALTIME. */
export function phaseTimes(stamped: string): { phase: string; ms: number }[] {
  const out: { phase: string; ms: number; t: number }[] = [];
  let end = 0;
  for (const line of stamped.split('\n')) {
    const m = /^(\d+\.\d+) (?:\S+ )?\[([a-z-]+)\]/.exec(line) ?? /^(\d+\.\d+) /.exec(line);
    if (!m) continue;
    const t = Number(m[1]) * 1000;
    end = t;
    const phase = m[2];
    if (phase && phase !== out[out.length - 1]?.phase) out.push({ phase, ms: 0, t });
  }
  return out.map((p, i) => ({ phase: p.phase, ms: Math.round((out[i + 1]?.t ?? end) - p.t) }));
}

/** Runs `kubeadm init --config` with every phase; each output line stamped so phases can be timed. */
export async function kubeadmInit(
  plane: PlaneData,
  s: Session,
  log: Logger,
): Promise<KubeadmRun['init']> {
  const script = `set -o pipefail; kubeadm init --config ${INIT_CONFIG} 2>&1 | while IFS= read -r l; do printf '%s %s\\n' "$EPOCHREALTIME" "$l"; done`;
  const argv = ['bash', '-c', script];
  log.info('  kubeadm init (every phase)');
  const t0 = performance.now();
  const r = await s.exec(argv, { allowFail: true, timeoutMs: 600_000 });
  const ms = Math.round(performance.now() - t0);
  const output = r.stdout
    .split('\n')
    .map((l) => l.replace(/^\d+\.\d+ /, ''))
    .join('\n')
    .trim();
  plane.steps.push({
    step: 'kubeadm init',
    argv: ['kubeadm', 'init', '--config', INIT_CONFIG],
    ms,
    ok: r.code === 0,
    output: output.split('\n').slice(-6).join('\n'),
  });
  if (r.code !== 0)
    throw new StepError('compare-kubeadm', `kubeadm init exited ${r.code}`, {
      host: s.host.name,
      detail: [...output.split('\n').slice(-25), ...r.stderr.split('\n').slice(-5)],
    });
  const phases = phaseTimes(r.stdout);
  plane.notes.push(
    `kubeadm init took ${(ms / 1000).toFixed(1)} s: ${phases
      .filter((p) => p.ms >= 100)
      .map((p) => `${p.phase} ${(p.ms / 1000).toFixed(1)} s`)
      .join(', ')} (phases under 0.1 s not listed)`,
  );
  return { ms, phases, output };
}

interface PodList {
  items: {
    metadata: { name: string; annotations?: Record<string, string> };
    status: { phase: string };
  }[];
}

/** The kube-system Pods from the API (admin.conf on the host), once the four mirror Pods are Running. */
async function mirrorPods(s: Session, node: string): Promise<KubeadmRun['mirrorPods']> {
  let last = '';
  return retry(
    async () => {
      const r = await orAbort(
        s.exec(
          ['kubectl', '--kubeconfig', ADMIN, 'get', 'pods', '-n', 'kube-system', '-o', 'json'],
          { allowFail: true },
        ),
      );
      last = `${r.stdout.slice(0, 300)}${r.stderr}`;
      if (r.code !== 0) throw new Error(last);
      const pods = (JSON.parse(r.stdout) as PodList).items.map((p) => ({
        name: p.metadata.name,
        phase: p.status.phase,
        mirror: Boolean(p.metadata.annotations?.['kubernetes.io/config.mirror']),
      }));
      const cp = COMPONENTS.map((c) => pods.find((p) => p.name === `${c}-${node}`));
      if (cp.some((p) => !p || !p.mirror || p.phase !== 'Running'))
        throw new Error('not all four mirror Pods Running');
      return pods;
    },
    {
      timeoutMs: 120_000,
      intervalMs: 2000,
      onTimeout: () => {
        throw new StepError(
          'compare-kubeadm',
          `the four control-plane mirror Pods were not Running within 120 s`,
          { host: s.host.name, detail: last.split('\n') },
        );
      },
    },
  );
}

/** Each running container of a kube-system static Pod, by its CRI labels, with its task's PID and /proc argv. */
async function staticContainers(
  s: Session,
): Promise<Partial<Record<Component, { id: string; pid: number; argv: string[] }>>> {
  const out: Partial<Record<Component, { id: string; pid: number; argv: string[] }>> = {};
  for (const { id, pid, labels } of await criContainers(s)) {
    const name = labels['io.kubernetes.container.name'] as Component | undefined;
    if (
      !name ||
      !(COMPONENTS as readonly string[]).includes(name) ||
      labels['io.kubernetes.pod.namespace'] !== 'kube-system'
    )
      continue;
    const argv = (await s.exec(['cat', `/proc/${pid}/cmdline`])).stdout.split('\0').filter(Boolean);
    out[name] = { id, pid, argv };
  }
  return out;
}

/** Reads what `kubeadm init` left running; plane.commands holds each manifest's command already. */
export async function readKubeadmLive(
  plane: PlaneData,
  s: Session,
  node: string,
  imported: string[],
  init: KubeadmRun['init'],
): Promise<KubeadmRun> {
  const t0 = performance.now();
  const pods = await mirrorPods(s, node);
  plane.steps.push({
    step: 'kubectl get pods -n kube-system: the four mirror Pods Running',
    ms: Math.round(performance.now() - t0),
    ok: true,
    output: pods.map((p) => `${p.name} ${p.phase}`).join('\n'),
  });
  const containers = await staticContainers(s);
  const mismatched: string[] = [];
  for (const c of COMPONENTS) {
    const got = containers[c];
    const manifest = plane.commands[c]?.argv ?? [];
    const same =
      !!got && got.argv.length === manifest.length && got.argv.every((a, i) => a === manifest[i]);
    if (!same) mismatched.push(c);
    plane.live ??= {};
    plane.live[c] = { pid: got?.pid ?? 0, argv: got?.argv ?? [], sameAsManifest: same };
    const proc = plane.processes.find((p) => p.name === c);
    if (proc && got) {
      proc.pid = got.pid;
      proc.state = `running here in container ${got.id.slice(0, 12)}, run by the kubelet (pid ${got.pid})`;
    }
  }
  if (mismatched.length)
    plane.notes.push(
      `live command line differs from the manifest (or no container) for: ${mismatched.join(', ')}`,
    );
  const kubeletPid = Number((await showUnit(s, 'kubelet', ['MainPID'])).MainPID ?? 0);
  const kubeletArgv = (await s.exec(['cat', `/proc/${kubeletPid}/cmdline`])).stdout
    .split('\0')
    .filter(Boolean);
  const kubeletConfig = (await s.readFile('/var/lib/kubelet/config.yaml')).toString('utf8');
  const flagsEnv = (await s.readFile('/var/lib/kubelet/kubeadm-flags.env')).toString('utf8').trim();
  const journal = (await s.exec(['journalctl', '-u', 'containerd', '--no-pager', '-o', 'cat']))
    .stdout;
  const pulls = journal.split('\n').filter((l) => /PullImage/.test(l));
  const images = (await s.exec(['ctr', '-n', 'k8s.io', 'images', 'ls', '-q'])).stdout
    .trim()
    .split('\n')
    .filter((r) => r && !r.startsWith('sha256:'));
  const kubelet = plane.processes.find((p) => p.name === 'kubelet');
  if (kubelet) {
    kubelet.pid = kubeletPid;
    kubelet.state = `running under systemd (kubelet.service + 10-kubeadm.conf), pid ${kubeletPid}`;
    kubelet.details = {
      ...kubelet.details,
      argv: kubeletArgv.join(' '),
      'kubeadm-flags.env': flagsEnv,
    };
  }
  plane.notes.push(
    `kubeadm init ran every phase; the kubelet runs kubeadm's four static Pods in containerd, and each container's /proc/<pid>/cmdline ${mismatched.length ? 'differs for some (see above)' : 'equals its manifest'}; containerd's journal has ${pulls.length} PullImage line(s)`,
  );
  return {
    init,
    mirrorPods: pods,
    kubelet: { pid: kubeletPid, argv: kubeletArgv, config: kubeletConfig, flagsEnv },
    imported,
    images,
    pulls,
  };
}
