// `hardwire flags prove --flags-of kubeadm` on one wired 1-host lab (issue 25: "the flags kubeadm
// passes … with their flags on hardwire's host"). What the test reads on its own: kubeadm's flags,
// from the real kubeadm run here with a config the test writes from the lab's inventory (its own
// dry run, its own manifest, read with a regex); each hit file:line re-opened in the Go module
// cache, inside the function delve named; each file a flag ran with, on the host; and the units,
// untouched or started again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hardwire } from './helpers/cli.ts';
import { remote, wiredTestLab, type WiredLab } from './helpers/lab.ts';
import { independentProblem, selectorOf } from './helpers/prove-evidence.ts';
import { loadFlagMap } from '../core/flags/map.ts';
import { loadInventory } from '../core/inventory/load.ts';
import { ensureBinary } from '../core/components/binaries/index.ts';
import type { ProveReport } from '../harness/prove/index.ts';

const PROVE_MS = 600_000;
let w: WiredLab;

beforeAll(async () => {
  w = await wiredTestLab('w1', 1);
});

afterAll(async () => {
  await w?.lab.down();
});

/** kubeadm's flags for one component: the test's own config and dry run, the manifest's `- --name=value` lines. */
async function kubeadmFlags(phase: string[], manifest: string): Promise<Map<string, string>> {
  const inv = loadInventory(w.inv);
  const h = inv.hosts[0]!;
  const dir = mkdtempSync(join(tmpdir(), 'kubeadm-test-'));
  try {
    writeFileSync(
      join(dir, 'c.yaml'),
      [
        'apiVersion: kubeadm.k8s.io/v1beta4',
        'kind: InitConfiguration',
        `localAPIEndpoint: {advertiseAddress: ${h.address}, bindPort: 6443}`,
        `nodeRegistration: {name: ${h.name}}`,
        '---',
        'apiVersion: kubeadm.k8s.io/v1beta4',
        'kind: ClusterConfiguration',
        `kubernetesVersion: ${inv.cluster.kubernetesVersion}`,
        `clusterName: ${inv.cluster.name}`,
        `networking: {serviceSubnet: ${inv.cluster.serviceCIDR}, podSubnet: ${inv.cluster.podCIDR}, dnsDomain: ${inv.cluster.dnsDomain}}`,
        '',
      ].join('\n'),
    );
    const bin = await ensureBinary('kubeadm', { kubernetesVersion: inv.cluster.kubernetesVersion });
    const r = spawnSync(
      bin.path,
      ['init', 'phase', ...phase, '--dry-run', '--config', join(dir, 'c.yaml')],
      {
        env: { PATH: process.env.PATH, KUBEADM_INIT_DRYRUN_DIR: join(dir, 'out') },
        encoding: 'utf8',
      },
    );
    expect(r.status, r.stderr).toBe(0);
    const text = readFileSync(join(dir, 'out', manifest), 'utf8');
    return new Map([...text.matchAll(/^ {4}- --([\w-]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function prove(component: string): ProveReport {
  const r = hardwire(
    [
      'flags',
      'prove',
      '--component',
      component,
      '--flags-of',
      'kubeadm',
      '--inventory',
      w.inv,
      '--state-dir',
      w.state,
      '--json',
    ],
    { timeoutMs: PROVE_MS },
  );
  if (r.code !== 0) throw new Error(`flags prove exited ${r.code}: ${r.stderr.slice(-3000)}`);
  writeFileSync(join(w.lab.stateDir, `${component}.kubeadm.prove.json`), r.stdout); // kept for the README's figures
  return JSON.parse(r.stdout) as ProveReport;
}

async function onHost<T>(
  f: (s: Awaited<ReturnType<WiredLab['lab']['ssh']>>) => Promise<T>,
): Promise<T> {
  const s = await w.lab.ssh(w.lab.info.hosts[0]!.name);
  try {
    return await f(s);
  } finally {
    await s.close();
  }
}

const COMPONENTS: [string, string[], string][] = [
  ['kube-apiserver', ['control-plane', 'apiserver'], 'kube-apiserver.yaml'],
  [
    'kube-controller-manager',
    ['control-plane', 'controller-manager'],
    'kube-controller-manager.yaml',
  ],
  ['kube-scheduler', ['control-plane', 'scheduler'], 'kube-scheduler.yaml'],
  ['etcd', ['etcd', 'local'], 'etcd.yaml'],
];

describe.each(COMPONENTS)('flags prove --flags-of kubeadm: %s', (component, phase, manifest) => {
  let report: ProveReport;
  let kubeadm: Map<string, string>;

  it(
    "runs the debug build with every flag kubeadm's manifest passes, each hit, kubeadm's value kept beside the value run",
    async () => {
      kubeadm = await kubeadmFlags(phase, manifest);
      expect(kubeadm.size).toBeGreaterThan(4);
      const pid = await onHost((s) =>
        remote(s, ['systemctl', 'show', '-p', 'MainPID', '--value', `${component}.service`]),
      );
      report = prove(component);
      expect(report.flagsOf?.tool).toBe('kubeadm');
      expect(report.exited).toBeUndefined();
      for (const [flag, value] of kubeadm) {
        const t = report.flagsOf!.flags.find((x) => x.flag === flag);
        expect(t?.original, `--${flag}`).toBe(value);
        const row = report.flags.find((f) => f.flag === flag);
        expect(row, `--${flag} is not in the report`).toBeDefined();
        expect(row!.original ?? row!.value, `--${flag}`).toBe(value);
        expect(row!.verdict, `--${flag}: ${row!.reason ?? ''}`).toBe('hit');
      }
      expect(report.flagsOf!.flags.map((t) => t.flag).sort()).toEqual([...kubeadm.keys()].sort());
      if (component === 'kube-apiserver') {
        // Beside the unit, which kept its process: only the port and the reconciler changed, and no audit log kubeadm does not write.
        expect(
          await onHost((s) =>
            remote(s, ['systemctl', 'show', '-p', 'MainPID', '--value', `${component}.service`]),
          ),
        ).toBe(pid);
        expect(report.changed?.map((c) => c.flag).sort()).toEqual([
          'endpoint-reconciler-type',
          'secure-port',
        ]);
        expect(report.changed!.find((c) => c.flag === 'secure-port')!.unit).toBe(
          kubeadm.get('secure-port'),
        );
        expect(report.argv.some((a) => a.startsWith('--audit-log-path='))).toBe(false);
      }
      const c = report.counts;
      console.log(
        `${component} (kubeadm's flags): flags ${c.hit}/${c.flags} hit, sites ${c.sitesHit}/${c.sites} hit, first citations ${report.flags.filter((f) => f.sites[0]?.status === 'hit').length}/${report.flags.length}, ${report.seconds.total.toFixed(1)} s`,
      );
    },
    PROVE_MS,
  );

  it("ran each file kubeadm names as hardwire's file of the same role, which is on the host", async () => {
    const files = report.flagsOf!.flags.filter((t) => t.original.startsWith('/'));
    expect(files.length).toBeGreaterThan(0);
    const unit = await onHost((s) =>
      remote(s, ['cat', `/etc/systemd/system/${component}.service`]),
    );
    // A systemd credential exists only while its unit runs: the file the unit loads it from is checked instead.
    const loaded = new Map(
      [...unit.matchAll(/^LoadCredential=([^:\n]+):(.+)$/gm)].map((m) => [
        `/run/credentials/${component}.service/${m[1]}`,
        m[2]!,
      ]),
    );
    for (const t of files) {
      expect(t.notProvable, `--${t.flag}`).toBeUndefined();
      expect(report.argv, `--${t.flag}`).toContain(`--${t.flag}=${t.run}`);
      const onDisk = loaded.get(t.run!) ?? t.run!;
      expect(
        await onHost((s) =>
          s.exec(['test', '-e', onDisk], { allowFail: true }).then((r) => r.code),
        ),
        `--${t.flag}: ${onDisk}`,
      ).toBe(0);
      if (t.run !== t.original)
        expect(
          loaded.get(t.run!),
          `--${t.flag}: ${t.run} is neither kubeadm's path nor a credential of the unit`,
        ).toBe(t.original);
    }
    if (component === 'etcd')
      expect(unit).toContain(`--cert-file=${files.find((t) => t.flag === 'cert-file')!.run}`); // where hardwire's own unit reads the server cert
  });

  it('each hit site re-opened in the module cache lies in the function delve named', () => {
    const map = loadFlagMap(component);
    const hits = report.flags.flatMap((f) =>
      f.sites.filter((s) => s.status === 'hit').map((s) => [f.flag, s] as const),
    );
    expect(hits.length).toBeGreaterThan(0);
    for (const [flag, s] of hits) {
      const sel = selectorOf(map, flag, s.ref);
      if (sel.startsWith('"')) continue; // a lookup by name: the line spells the flag, checked by flags verify
      expect(independentProblem(s, sel), `--${flag} ${s.ref}`).toBeUndefined();
    }
  });

  it('leaves the unit running and no scratch dir behind', async () => {
    const state = await onHost((s) =>
      remote(s, ['systemctl', 'is-active', `${component}.service`]),
    );
    // On failure, the unit's own last lines say why it is not running.
    const journal =
      state === 'active'
        ? ''
        : await onHost((s) =>
            remote(s, [
              'journalctl',
              '-u',
              `${component}.service`,
              '-n',
              '12',
              '--no-pager',
              '-o',
              'cat',
            ]),
          );
    expect(state, journal).toBe('active');
    expect(
      await onHost((s) =>
        remote(s, ['sh', '-c', 'ls -d /var/tmp/hardwire-prove.* 2>/dev/null || true']),
      ),
    ).toBe('');
  });
});
