// A Kubernetes release's flag maps on demand (issue 42, harness/flags/kubernetes-on-demand.ts): the
// build lists it makes with `go mod tidy` equal the committed module files of both pinned releases;
// a release the Go module proxy does not serve is one line and writes nothing; v1.36.1 (no committed
// map) is built into ~/.cache/hardwire/flag-maps/v1.36.1 (about 20 minutes the first time on this
// machine, then found there) and maps every flag hardwire's units pass, cited at v1.36.1 in the
// module cache. Needs Go and the module proxy; no lab.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { releaseBuildLists } from '../harness/flags/build-lists.ts';
import {
  kubernetesMapOnDemand,
  mapOnDemand,
  releaseOnDemand,
} from '../harness/flags/kubernetes-on-demand.ts';
import { planFrom } from '../core/upgrade/plan-for.ts';
import { analyzerPins } from '../harness/flags/regenerate.ts';
import { argvFlags, mapFlags, mapFor } from '../harness/audit/flags.ts';
import { execStartArgv } from '../harness/planes/normalize.ts';
import { dataDir, loadFlagMap } from '../core/flags/map.ts';
import { hardwire } from './helpers/cli.ts';
import { reopenSite } from './helpers/modcache.ts';
import { tempDir } from './helpers/tmp.ts';
import { renderedHosts } from './helpers/audit-fixture.ts';

const steps: string[] = [];
const LOG = { info: () => {}, warn: () => {}, step: (m: string) => steps.push(m) };
const analyzer = join(import.meta.dirname, '..', 'harness', 'flags', 'analyzer');
const RELEASE = 'v1.36.1';
const KUBE = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubelet',
  'kube-proxy',
];

/** Each required module at the version the build really uses (a versioned replace wins), read by `go mod edit -json`. */
function buildList(modfile: string): string[] {
  const j = JSON.parse(
    execFileSync('/usr/local/go/bin/go', ['mod', 'edit', '-json', modfile], { encoding: 'utf8' }),
  ) as {
    Require?: { Path: string; Version: string }[];
    Replace?: { Old: { Path: string }; New: { Path: string; Version?: string } }[];
  };
  const to = new Map((j.Replace ?? []).map((r) => [r.Old.Path, r.New.Version]));
  return (j.Require ?? [])
    .filter((r) => !r.Path.startsWith('hardwire.local/'))
    .map((r) => `${r.Path} ${to.get(r.Path) ?? r.Version}`)
    .sort();
}

let hosts: string;
const unitOf = (c: string) =>
  readFileSync(
    join(
      hosts,
      c === 'kubelet' || c === 'kube-proxy' ? 'w-1' : 'cp-0',
      'etc/systemd/system',
      `${c}.service`,
    ),
    'utf8',
  );
beforeAll(() => {
  hosts = renderedHosts();
}, 120_000);

describe('Kubernetes flag maps on demand', () => {
  it.each([
    ['v1.36.3', 'go.mod', 'node/go.mod', 'etcd/go.mod'],
    ['v1.37.2', 'go.v1.37.2.mod', 'node/go.v1.37.2.mod', 'etcd/go.v3.7.0.mod'],
  ])(
    "the build lists made with go mod tidy for %s equal the committed module files, and its etcd is kubeadm's",
    (version, k8s, node, etcd) => {
      const lists = releaseBuildLists(version, tempDir('hardwire-bl-'), LOG);
      if ('why' in lists) throw new Error(lists.why);
      expect(buildList(lists.modfile)).toEqual(buildList(join(analyzer, k8s)));
      expect(buildList(lists.nodeModfile)).toEqual(buildList(join(analyzer, node)));
      expect(buildList(lists.etcdModfile)).toEqual(buildList(join(analyzer, etcd)));
      expect(lists.etcd).toBe(analyzerPins[version]!.etcd);
      // The cited line, reopened in the module cache: kubeadm's own pin.
      const m = /^(k8s\.io\/kubernetes)@(v[\d.]+)\/(.+):(\d+) /.exec(lists.etcdCite)!;
      expect(
        reopenSite({ module: m[1]!, version: m[2]!, file: m[3]!, line: Number(m[4]) }),
      ).toContain(`DefaultEtcdVersion = "${lists.etcd.slice(1)}-0"`);
    },
    600_000,
  );

  it('a release the module proxy does not serve: one line saying so, nothing written, and flags --regenerate exits 2', () => {
    const cache = tempDir('hardwire-k8s-cache-');
    const r = kubernetesMapOnDemand('kube-apiserver', 'v1.36.99', LOG, cache);
    expect('why' in r && r.why).toMatch(
      /^no flag map for kube-apiserver v1\.36\.99: the Go module proxy does not serve k8s\.io\/kubernetes@v1\.36\.99 \(.*(403|404|410|not found|unknown revision|invalid version)/,
    );
    expect('why' in r && r.why).not.toContain('\n');
    expect(readdirSync(cache)).toEqual([]);
    const cli = hardwire(['flags', '--regenerate', '--kubernetes-version', 'v1.36.99']);
    expect(cli.code).toBe(2);
    expect(cli.stderr.trim().split('\n').at(-1)).toMatch(
      /^error: version: cannot build a flag map for Kubernetes v1\.36\.99: the Go module proxy does not serve/,
    );
    expect(existsSync(dataDir('v1.36.99'))).toBe(false);
  }, 300_000);

  it(`${RELEASE}, which has no committed map: built once into ~/.cache/hardwire/flag-maps, found there again without a build; every flag hardwire's units pass is mapped at ${RELEASE}`, () => {
    expect(existsSync(dataDir(RELEASE))).toBe(false);
    expect(mapFor('kube-apiserver', RELEASE)).toEqual({
      why: `no flag map for kube-apiserver ${RELEASE} here; "hardwire flags --regenerate --kubernetes-version ${RELEASE}" builds one from its Go modules`,
    });
    // The shared cache: the first run on a machine builds the release (~20 min), later runs read it.
    const onDemand = mapOnDemand(LOG);
    const first = kubernetesMapOnDemand('kube-apiserver', RELEASE, LOG);
    if ('why' in first) throw new Error(first.why);
    steps.length = 0;
    for (const c of KUBE) {
      const m = mapFor(c, RELEASE, onDemand);
      if ('why' in m) throw new Error(m.why);
      expect(m.file).toMatch(new RegExp(`/flag-maps/${RELEASE}/${c}\\.json$`));
      expect(m.map).toMatchObject({ component: c, kubernetesVersion: RELEASE });
      const flags = mapFlags(execStartArgv(unitOf(c)), m);
      expect(flags.length).toBeGreaterThan(0);
      // The committed v1.36.3 map's registration of the same flag: the same module and file, at v1.36.1's tag.
      const pinned = loadFlagMap(c, 'v1.36.3');
      for (const f of flags) {
        expect(f.status, `${c} --${f.name}`).toMatch(/^(read|registered)$/);
        const mine = m.map.flags.find((x) => x.name === f.name)!.registeredAt!;
        const theirs = pinned.flags.find((x) => x.name === f.name)!.registeredAt!;
        expect(
          { module: mine.module, file: mine.file, version: mine.version },
          `${c} --${f.name}`,
        ).toEqual({
          module: theirs.module,
          file: theirs.file,
          version: theirs.version.replace(/^v([01])\.36\.3$/, 'v$1.36.1'),
        });
        // Reopened in the module cache, the two tags' registration lines are the same code.
        expect(reopenSite(mine).trim(), `${c} --${f.name}`).toBe(reopenSite(theirs).trim());
      }
    }
    // Found in the cache: no build step the second time.
    expect(steps).toEqual([]);
  }, 3_600_000);

  it(`audit --upgrade-to's plan from a cluster at ${RELEASE} reads its maps from the cache, and agrees row for row with the plan from v1.36.3`, () => {
    const passed = Object.fromEntries(KUBE.map((c) => [c, argvFlags(execStartArgv(unitOf(c)))]));
    const start = { from: RELEASE, etcdFrom: 'v3.6.8', passed, fields: {} };
    expect(() => planFrom(start, 'v1.37.2')).toThrow(
      `cluster.kubernetesVersion: no flag map for ${RELEASE}`,
    );
    const mine = planFrom(start, 'v1.37.2', undefined, { release: releaseOnDemand(LOG) });
    const pinned = planFrom({ ...start, from: 'v1.36.3' }, 'v1.37.2');
    expect(mine.from).toBe(RELEASE);
    const rows = (d: typeof mine) =>
      d.components.flatMap((c) => c.rows.map((r) => `${c.component} --${r.flag} ${r.status}`));
    expect(rows(mine).length).toBeGreaterThan(50);
    expect(rows(mine)).toEqual(rows(pinned));
    expect(mine.blocking).toBe(pinned.blocking);
    for (const c of mine.components)
      for (const r of c.rows.filter((x) => x.from?.registeredAt?.startsWith('k8s.io/kubernetes@')))
        expect(r.from!.registeredAt, `${c.component} --${r.flag}`).toMatch(
          new RegExp(`^k8s\\.io/kubernetes@${RELEASE.replace(/\./g, '\\.')}/`),
        );
  }, 600_000);
});
