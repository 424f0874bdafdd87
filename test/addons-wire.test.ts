// The opt-in metrics-server addon (cluster.addons, issue 44) wired onto the shared 1-host workers lab
// (w1w: node1 is etcd, control plane, worker and the lab registry). The same lab's inventory with
// `addons: [metrics-server]` is wired by the real CLI; the evidence is read around hardwire: the
// real `kubectl top nodes`, the APIService through kubectl, containerd's journal on each worker and
// the registry's own access log and storage over SSH.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remote, wiredTestLab, type WiredLab } from './helpers/lab.ts';
import { hardwire } from './helpers/cli.ts';
import { binaryPath } from '../core/components/binaries/cache.ts';
import { PINNED_KUBERNETES } from '../lib/constants.ts';
import { run } from '../lib/proc.ts';
import { labFiles, readState } from '../harness/lab/state.ts';
import { labDir } from '../harness/lab/plan.ts';

const NAME = 'w1w';
const HOSTS = ['node1'];
const REGISTRY_HOST = 'node1';
const IMAGE = 'registry.k8s.io/metrics-server/metrics-server:v0.8.0';
const REPO = 'metrics-server/metrics-server';

interface WireReport {
  plan: { hosts: { host: string; changes: { path: string; reason: string }[] }[] };
  restarted: { host: string; unit: string }[];
}

describe('the metrics-server addon on a wired workers lab (issue 44)', () => {
  let w: WiredLab;
  let kc: string;
  let first: WireReport;
  let firstSeconds: number;
  const kubectl = async (args: string[]) => {
    const r = await run(
      binaryPath('kubectl', PINNED_KUBERNETES),
      ['--kubeconfig', kc, '--request-timeout=20s', ...args],
      { step: 'kubectl', allowFail: true, timeoutMs: 60_000 },
    );
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r.stdout;
  };
  let inventory: string;
  const wire = (): { report: WireReport; seconds: number } => {
    const t = Date.now();
    const r = hardwire(['wire', '--inventory', inventory, '--state-dir', w.state, '--json'], {
      timeoutMs: 900_000,
    });
    if (r.code !== 0)
      throw new Error(`wire with the addon exited ${r.code}: ${r.stderr.slice(-3000)}`);
    return { report: JSON.parse(r.stdout) as WireReport, seconds: (Date.now() - t) / 1000 };
  };
  const addrs = () =>
    new Map(
      readState(labFiles(labDir(NAME, w.lab.stateDir)))!.hosts.map((h) => [h.name, h.address]),
    );

  beforeAll(async () => {
    w = await wiredTestLab(NAME, HOSTS.length, { workers: true });
    kc = join(w.state, NAME, 'kubeconfigs', 'admin.conf');
    // The lab's own inventory, beside it (its knownHosts is relative), with the addon turned on.
    const doc = parse(readFileSync(w.inv, 'utf8')) as { cluster: Record<string, unknown> };
    doc.cluster.addons = ['metrics-server'];
    inventory = w.inv.replace(/\.ya?ml$/, '-addons.yaml');
    writeFileSync(inventory, stringify(doc));
    ({ report: first, seconds: firstSeconds } = wire());
    console.log(`[addons-wire] wire with metrics-server on ${NAME}: ${firstSeconds.toFixed(1)} s`);
  }, 1_200_000);
  afterAll(async () => {
    await w?.lab.down();
  });

  it("the wire pushed registry.k8s.io's mirror to each worker and restarted the registry to push the image; a second wire changes nothing", () => {
    const changed = first.plan.hosts.flatMap((h) => h.changes.map((c) => `${h.host}:${c.path}`));
    for (const h of HOSTS)
      expect(changed).toContain(`${h}:/etc/containerd/certs.d/registry.k8s.io/hosts.toml`);
    expect(first.restarted.map((r) => `${r.host}:${r.unit}`)).toContain(
      `${REGISTRY_HOST}:registry.service`,
    );
    const again = wire();
    console.log(`[addons-wire] second wire: ${again.seconds.toFixed(1)} s`);
    expect(again.report.plan.hosts.flatMap((h) => h.changes)).toEqual([]);
    expect(again.report.restarted).toEqual([]);
  });

  it('the aggregator reports the metrics.k8s.io APIService Available, and `kubectl top nodes` prints numbers for every node', async () => {
    expect(
      await kubectl([
        'get',
        'apiservice',
        'v1beta1.metrics.k8s.io',
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Available")].status}',
      ]),
    ).toBe('True');
    const top = await kubectl(['top', 'nodes']);
    console.log(`[addons-wire] kubectl top nodes:\n${top}`);
    const lines = top.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+CPU\(cores\)\s+CPU\(?%\)?\s+MEMORY\(bytes\)\s+MEMORY\(?%\)?/);
    for (const h of HOSTS) {
      const row = lines.find((l) => l.startsWith(`${h} `));
      expect(row, `kubectl top nodes has no row for ${h}`).toBeDefined();
      const m = /^\S+\s+(\d+)m\s+(\d+)%\s+(\d+)Mi\s+(\d+)%/.exec(row!);
      expect(m, row).not.toBeNull();
      expect(Number(m![1])).toBeGreaterThan(0);
      expect(Number(m![3])).toBeGreaterThan(0);
    }
    // And the Pods' usage: metrics-server itself is one of them.
    expect(await kubectl(['top', 'pods', '-n', 'kube-system'])).toMatch(
      /^metrics-server-\S+\s+\d+m\s+\d+Mi/m,
    );
  });

  it("each worker's containerd pulled the image by its registry.k8s.io name from the lab registry, which logged that worker asking, and nothing went to registry.k8s.io", async () => {
    const reg = await w.lab.ssh(REGISTRY_HOST);
    const regJournal = await remote(reg, [
      'journalctl',
      '-u',
      'registry',
      '--no-pager',
      '-o',
      'cat',
    ]);
    const stored = (
      await remote(reg, [
        'sh',
        '-c',
        `ls /var/lib/registry/docker/registry/v2/repositories/${REPO}/_manifests/revisions/sha256/`,
      ])
    ).split('\n');
    const podNode = (
      await kubectl([
        '-n',
        'kube-system',
        'get',
        'pods',
        '-l',
        'k8s-app=metrics-server',
        '-o',
        'jsonpath={.items[0].spec.nodeName}',
      ])
    ).trim();
    expect(HOSTS).toContain(podNode);
    for (const h of HOSTS) {
      const s = await w.lab.ssh(h);
      const journal = await remote(s, [
        'journalctl',
        '-u',
        'containerd',
        '--no-pager',
        '-o',
        'cat',
      ]);
      // `Pulled image "<ref>" with image id "sha256:…", repo tag "<ref>", repo digest "<repo>@sha256:…"`.
      const pulls = [
        ...journal.matchAll(
          /Pulled image \\?"([^"\\]+)\\?" with image id \\?"[^"\\]+\\?", repo tag \\?"([^"\\]+)\\?", repo digest \\?"([^"\\]+)\\?"/g,
        ),
      ].filter((m) => m[2] === IMAGE);
      if (h === podNode) expect(pulls.length, `${h} pulled ${IMAGE}`).toBeGreaterThan(0);
      for (const [, , , digest] of pulls) {
        expect(digest).toMatch(new RegExp(`^registry\\.k8s\\.io/${REPO}@sha256:[0-9a-f]{64}$`));
        // The digest containerd got is one the lab registry stores.
        expect(stored).toContain(digest!.split('@sha256:')[1]);
      }
      if (pulls.length > 0)
        // The registry's access log: `<client address> - - [...] "HEAD /v2/<repo>/manifests/v0.8.0?ns=registry.k8s.io ...`.
        expect(regJournal).toMatch(
          new RegExp(
            `^${addrs().get(h)!.replace(/\./g, '\\.')} - - \\[.*\\] "(HEAD|GET) /v2/${REPO}/manifests/v0\\.8\\.0\\?ns=registry\\.k8s\\.io `,
            'm',
          ),
        );
      // No pull fell through to the real registry (its hosts.toml's server).
      expect(journal).not.toMatch(/https:\/\/registry\.k8s\.io\/v2/);
    }
  });
});
