// Wire against the floor, side by side in one run, for 1, 3 and 5 lab hosts (binaries cached).
// For each N, twice and interleaved (floor, cold wire, floor, cold wire), each on freshly booted lab
// hosts: the floor (every host gets the same rendered files and binaries by one tar stream over
// OpenSSH, all hosts in parallel, then `systemctl start` of all four units, timed until every
// apiserver answers /readyz), and hardwire's cold wire as wall time of the whole process, with a
// fresh PKI. Noise on this shared machine only ever adds time, so each side's best run is compared.
// After the first cold wire: two no-op re-runs and a one-flag change. Prints figures; not a test.
// With --workers (the built-in lab's shape: every host also a worker), both sides go on to a Running
// Pod: the floor also pushes the worker binaries and image tarballs, starts containerd, the kubelet
// and kube-proxy, applies the same CoreDNS and probe objects as super-admin, and stops the clock when
// every probe Pod is Running; wire's clock stops when its last gate (the probes) has passed.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { $ } from 'zx';
import { parse, stringify } from 'yaml';
import { labDown, labUp } from '../harness/lab/index.ts';
import { loadValidInventory } from '../core/validate/inventory.ts';
import { ensureAll } from '../core/components/binaries/index.ts';
import { binariesFor } from '../core/components/registry/index.ts';
import { retry } from '../lib/retry.ts';
import { ensureImages } from '../core/components/image-build.ts';
import { corednsObjects } from '../core/addons/coredns.ts';
import { probeObjects, PROBE_NS } from '../core/gates/pods.ts';
import { CLUSTER_ADMINS_BINDING } from '../core/apply/phases/rbac.ts';
import { sshAddressOf } from '../core/transport/session.ts';

const cli = join(import.meta.dirname, '..', 'cli', 'hardwire.ts');
const workers = process.argv.includes('--workers');
const sizes = (process.argv.slice(2).find((a) => !a.startsWith('--')) ?? (workers ? '3' : '1,3,5'))
  .split(',')
  .map(Number);

async function timedWire(
  inv: string,
  state: string,
): Promise<{ wallMs: number; totalMs: number; phases: Record<string, number> }> {
  const t0 = performance.now();
  const r = await $({
    quiet: true,
    nothrow: true,
  })`${process.execPath} ${cli} wire --inventory ${inv} --state-dir ${state} --json`;
  const wallMs = performance.now() - t0;
  if (r.exitCode !== 0) throw new Error(`wire failed: ${r.stderr.slice(-2000)}`);
  const { total, ...phases } = (JSON.parse(r.stdout) as { durationsMs: Record<string, number> })
    .durationsMs;
  return { wallMs, totalMs: total ?? 0, phases };
}

/** The floor: one tar stream per host (rendered tree + cached binaries), all hosts at once, then start and wait for /readyz. */
async function floor(invFile: string, state: string): Promise<number> {
  const inv = loadValidInventory(invFile);
  const kubectl = (await ensureAll(['kubectl']))[0]!.path;
  const admin = join(state, inv.cluster.name, 'kubeconfigs', 'admin.conf');
  const bins = new Map(
    (
      await ensureAll([...new Set(inv.hosts.flatMap((h) => binariesFor(h).map((b) => b.name)))])
    ).map((b) => [b.name, b.path]),
  );
  const images =
    inv.workerHosts.length > 0
      ? await ensureImages({ info: () => {}, warn: () => {}, step: () => {} })
      : [];
  const stages = inv.hosts.map((h) => {
    // A staging dir of symlinks, so tar -h reads each file straight from where it is.
    const dir = mkdtempSync(join(tmpdir(), 'hardwire-floor-'));
    mkdirSync(join(dir, 'usr', 'local', 'bin'), { recursive: true });
    symlinkSync(join(state, inv.cluster.name, 'hosts', h.name, 'etc'), join(dir, 'etc'));
    for (const b of binariesFor(h))
      symlinkSync(bins.get(b.name)!, join(dir, 'usr', 'local', 'bin', b.name));
    if (h.isWorker) {
      // The worker's rendered /var/lib files, and the images where containerd's ExecStartPost imports them.
      const vl = join(state, inv.cluster.name, 'hosts', h.name, 'var', 'lib');
      mkdirSync(join(dir, 'var', 'lib', 'hardwire', 'images'), { recursive: true });
      for (const d of ['kubelet', 'kube-proxy'])
        symlinkSync(join(vl, d), join(dir, 'var', 'lib', d));
      for (const i of images) symlinkSync(i.path, join(dir, i.hostPath));
    }
    return dir;
  });
  const units = (h: { isWorker: boolean }) =>
    [
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
      ...(h.isWorker ? ['containerd', 'kubelet', 'kube-proxy'] : []),
    ].join(' ');
  const t0 = performance.now();
  await Promise.all(
    inv.hosts.map(async (h, i) => {
      const ssh = [
        '-i',
        h.ssh.identityFile,
        '-o',
        `UserKnownHostsFile=${inv.knownHostsFile}`,
        '-o',
        'StrictHostKeyChecking=yes',
        `root@${sshAddressOf(h)}`,
      ];
      await $({
        quiet: true,
      })`tar -C ${stages[i]} -chf - ${h.isWorker ? ['etc', 'usr', 'var'] : ['etc', 'usr']}`.pipe(
        $({ quiet: true })`ssh ${ssh} tar -C / -xf -`,
      );
      // etcd runs as its own user, which owns its data dir (hardwire's accounts phase makes both).
      // One argument: ssh hands the remote shell a single command line (with `sh -c` in front, only `id` would be its script).
      await $({
        quiet: true,
      })`ssh ${ssh} ${'id etcd >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin etcd; install -d -o etcd -g etcd -m 0700 /var/lib/etcd && systemctl daemon-reload && systemctl start --no-block ' + units(h)}`;
    }),
  );
  await Promise.all(
    inv.controlPlaneHosts.map(async (h) => {
      await retry(
        async () => {
          if (
            (
              await $({
                quiet: true,
                nothrow: true,
              })`${kubectl} --kubeconfig ${admin} --server https://${h.address}:6443 get --raw /readyz`
            ).stdout.trim() !== 'ok'
          )
            throw new Error('not ready');
        },
        {
          timeoutMs: 180_000,
          intervalMs: 250,
          onTimeout: () => {
            throw new Error(`floor: ${h.name} never answered /readyz`);
          },
        },
      );
    }),
  );
  if (inv.workerHosts.length > 0) {
    // The same objects wire applies, then until every probe Pod is Running.
    const superAdmin = join(state, inv.cluster.name, 'kubeconfigs', 'super-admin.conf');
    const objs = join(stages[0]!, 'objects.json');
    writeFileSync(
      objs,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [CLUSTER_ADMINS_BINDING, ...corednsObjects(inv), ...probeObjects(inv)],
      }),
    );
    await retry(
      async () => {
        await $({ quiet: true })`${kubectl} --kubeconfig ${superAdmin} apply -f ${objs}`;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    await retry(
      async () => {
        const out = (
          await $({
            quiet: true,
            nothrow: true,
          })`${kubectl} --kubeconfig ${superAdmin} -n ${PROBE_NS} get pods -o jsonpath={.items[*].status.phase}`
        ).stdout
          .trim()
          .split(/\s+/);
        if (out.length !== inv.workerHosts.length || out.some((p) => p !== 'Running'))
          throw new Error(`probe Pods: ${out.join(' ')}`);
      },
      {
        timeoutMs: 300_000,
        intervalMs: 250,
        onTimeout: (e) => {
          throw new Error(`floor: probe Pods never all Running (${String(e)})`);
        },
      },
    );
  }
  const ms = performance.now() - t0;
  for (const d of stages) rmSync(d, { recursive: true, force: true });
  return ms;
}

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const ROUNDS = 2;
const rows: string[] = [];
for (const n of sizes) {
  // Stable state dir per lab, so a crashed run's lab is taken down by the next run.
  const name = `benchw${n}${workers ? 'w' : ''}`;
  const stateDir = join(tmpdir(), 'hardwire-bench-labs', name);
  const fresh = async () => {
    await labDown({ name, stateDir });
    return labUp({ name, stateDir, hosts: n, workers });
  };
  await labDown({ name, stateDir }).catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
  mkdirSync(stateDir, { recursive: true });
  const floors: number[] = [];
  const colds: number[] = [];
  let noops: number[] = [];
  let oneFlag = 0;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const floorState = join(stateDir, `floor-${round}`);
      let lab = await fresh();
      await $({
        quiet: true,
      })`${process.execPath} ${cli} render --inventory ${lab.inventory} --state-dir ${floorState}`;
      floors.push(await floor(lab.inventory, floorState));
      lab = await fresh();
      const state = join(stateDir, `wire-${round}`);
      const cold = await timedWire(lab.inventory, state);
      colds.push(cold.wallMs);
      console.log(
        `${n} host(s), round ${round + 1}: floor ${s(floors.at(-1)!)}, cold wire ${s(cold.wallMs)}; cold by phase (ms) ${JSON.stringify(cold.phases)}`,
      );
      if (round > 0) continue;
      const runs = [await timedWire(lab.inventory, state), await timedWire(lab.inventory, state)];
      noops = runs.map((x) => x.wallMs);
      console.log(
        `${n} host(s): no-op by phase (ms) ${JSON.stringify(runs[1]!.phases)}; outside the phases (Node's start, module loading, exit) ${Math.round(runs[1]!.wallMs - runs[1]!.totalMs)} ms`,
      );
      const doc = parse(readFileSync(lab.inventory, 'utf8')) as {
        cluster: Record<string, unknown>;
      };
      doc.cluster.extraArgs = { 'kube-scheduler': { v: '2' } };
      const flagged = join(stateDir, 'inv-flag.yaml');
      writeFileSync(flagged, stringify(doc));
      oneFlag = (await timedWire(flagged, state)).wallMs;
    }
    const best = (xs: number[]) => Math.min(...xs);
    rows.push(
      `| ${n} | ${colds.map(s).join(', ')} | ${floors.map(s).join(', ')} | ${(best(colds) / best(floors)).toFixed(2)}× | ${noops.map(s).join(', ')} | ${s(oneFlag)} |`,
    );
  } finally {
    await labDown({ name, stateDir });
  }
}
console.log(
  '\n| hosts | cold wire (rounds) | floor (rounds) | best cold / best floor | no-op (wall, twice) | one-flag change |\n|---|---|---|---|---|---|',
);
for (const r of rows) console.log(r);
