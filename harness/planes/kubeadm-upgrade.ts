// The real `kubeadm upgrade plan` on the kubeadm plane's host (issue 24): the target's kubeadm,
// built from its Go module like the pinned one, is put beside it as /usr/bin/kubeadm-<version>,
// and run twice against the live cluster: as a person reads it (text) and as kubeadm's own
// structured output (-o json, output.kubeadm.k8s.io/v1alpha3 UpgradePlan), which the report reads.
// Nothing is upgraded: `plan` only reads, except the Job its CreateJob health check runs.
import { statSync } from 'node:fs';
import { ensureBinary } from '../../core/components/binaries/index.ts';
import type { Session } from '../../core/transport/index.ts';
import type { Logger } from '../../lib/log.ts';
import type { PlaneData } from './types.ts';
import type { KubeadmPlanDoc, KubeadmRunOutput, KubeadmUpgradePlan } from './upgrade-types.ts';

const src = (version: string, file: string, line: number) =>
  `k8s.io/kubernetes@${version}/cmd/kubeadm/app/${file}:${line}`;

/**
 * Why `kubeadm upgrade plan <version>` needs no other flag here, from kubeadm's source at the target:
 * the version argument makes it offline, and the other two flags matter only for pre-releases.
 */
export function planWhy(to: string): string[] {
  return [
    `the version argument: "To skip the internet check, pass in the optional [version] parameter" (${src(to, 'cmd/upgrade/plan.go', 54)}); with it the version getter answers every release label with that version (${src(to, 'phases/upgrade/versiongetter.go', 179)}), so no dl.k8s.io lookup is made from a lab host with no route out`,
    `no --allow-experimental-upgrades / --allow-release-candidate-upgrades: they only admit a pre-release target (${src(to, 'phases/upgrade/compute.go', 224)}; the printed apply command adds one only when the target has a pre-release part, ${src(to, 'cmd/upgrade/plan.go', 297)}), and ${to} has none`,
    `no --ignore-preflight-errors: plan's health checks (CreateJob, ControlPlaneNodesReady, StaticPodManifest, ${src(to, 'phases/upgrade/health.go', 79)}) pass on this host; CreateJob runs kubeadm's pause image, which is imported here under the name kubeadm gives it`,
  ];
}

async function runOn(s: Session, argv: string[]): Promise<KubeadmRunOutput> {
  const t0 = performance.now();
  const r = await s.exec(argv, { allowFail: true, timeoutMs: 300_000 });
  return {
    argv,
    exitCode: r.code,
    ms: Math.round(performance.now() - t0),
    stdout: r.stdout,
    stderr: r.stderr,
  };
}

function parsePlan(stdout: string): KubeadmPlanDoc | null {
  try {
    const doc = JSON.parse(stdout) as KubeadmPlanDoc & { kind?: string };
    return doc.kind === 'UpgradePlan' ? doc : null;
  } catch {
    return null;
  }
}

/**
 * Pushes the target's kubeadm to the host and runs its `upgrade plan` twice; the plane's steps record
 * each run. A kubeadm that cannot be had or put there is the reason, not a failed plane.
 */
export async function kubeadmUpgradePlan(
  plane: PlaneData,
  s: Session,
  to: string,
  log: Logger,
): Promise<KubeadmUpgradePlan | { none: string }> {
  log.info(`  kubeadm ${to} upgrade plan on ${s.host.name}`);
  let t0 = performance.now();
  const binary = `/usr/bin/kubeadm-${to}`;
  let bin: Awaited<ReturnType<typeof ensureBinary>>;
  try {
    bin = await ensureBinary('kubeadm', { kubernetesVersion: to, log });
    await s.writeFilesAtomic([
      { path: binary, mode: 0o755, data: { file: bin.path, size: statSync(bin.path).size } },
    ]);
  } catch (err) {
    const why = `kubeadm ${to} not put on ${s.host.name}: ${err instanceof Error ? err.message : String(err)}`;
    plane.steps.push({
      step: `put kubeadm ${to} on the host as ${binary}`,
      ms: Math.round(performance.now() - t0),
      ok: false,
      output: why,
    });
    return { none: why };
  }
  plane.steps.push({
    step: `put kubeadm ${to} on the host as ${binary}`,
    ms: Math.round(performance.now() - t0),
    ok: true,
    output: `${bin.path} sha256 ${bin.sha256}`,
  });
  t0 = performance.now();
  const v = await runOn(s, [binary, 'version', '-o', 'short']);
  plane.steps.push({
    step: `${binary} version`,
    argv: v.argv,
    ms: v.ms,
    ok: v.exitCode === 0,
    output: `${v.stdout}${v.stderr}`.trim(),
  });
  const text = await runOn(s, [binary, 'upgrade', 'plan', to]);
  const json = await runOn(s, [binary, 'upgrade', 'plan', to, '-o', 'json']);
  for (const r of [text, json]) {
    plane.steps.push({
      step: `kubeadm ${to} upgrade plan${r === json ? ' -o json' : ''}`,
      argv: r.argv,
      ms: r.ms,
      ok: r.exitCode === 0,
      output: `${r.stdout}${r.stderr}`.trim().split('\n').slice(-6).join('\n'),
    });
  }
  return {
    to,
    binary,
    version: v.stdout.trim(),
    text,
    json: { ...json, plan: parsePlan(json.stdout) },
    why: planWhy(to),
  };
}
