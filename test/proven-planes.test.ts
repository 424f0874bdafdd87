// compare's "proven live" column per plane (issue 25): each plane that passes a flag shows its own
// `flags prove --record` (hardwire's unit, or `--flags-of kubeadm|k0s`), one without a record "-".
// The records are written to a temp dir (HARDWIRE_PROVEN_DIR), never to core/flags/proven/.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/tmp.ts';
import {
  provenCell,
  writeProven,
  type ProvenFlag,
  type ProvenRecord,
} from '../core/flags/proven.ts';
import { buildReport, flagRows } from '../harness/compare/build.ts';
import { markdown } from '../harness/compare/text.ts';
import { html } from '../harness/compare/html.ts';
import {
  emptyPlane,
  type ClusterParams,
  type PlaneData,
  type PlaneName,
} from '../harness/planes/types.ts';
import { unbroken } from '../lib/html.ts';

/** A version with no flag map and no committed record: every cell comes from the temp dir. */
const V = 'v0.0.0-proven-planes';
const C = 'kube-scheduler';

function flag(sitesHit: number, sites: number, sitesOff = 0): ProvenFlag {
  return { verdict: sitesHit ? 'hit' : 'not hit', sitesHit, sitesOff, sites, at: [] };
}

function record(date: string, flags: Record<string, ProvenFlag>, flagsOf?: string): ProvenRecord {
  return {
    component: C,
    kubernetesVersion: V,
    date,
    debugSha256: '0'.repeat(64),
    dlv: 'test',
    argv: ['x'],
    ...(flagsOf ? { flagsOf } : {}),
    flags,
  };
}

function plane(p: PlaneName, flags: string[]): PlaneData {
  return {
    ...emptyPlane(p, 'test', true),
    commands: { [C]: { argv: [C, ...flags.map((f) => `--${f}=1`)], source: 'test' } },
  };
}

const HW = `hit 4/4, ${V} 2026-12-02`;
const KA = `hit 3/4, ${V} 2026-12-03`;

describe('proven live per plane', () => {
  let dir = '';
  const before = process.env.HARDWIRE_PROVEN_DIR;
  beforeAll(() => {
    dir = tempDir('hardwire-proven-planes-');
    process.env.HARDWIRE_PROVEN_DIR = dir;
    expect(
      writeProven(record('2026-12-02', { 'secure-port': flag(4, 4), profiling: flag(6, 8, 1) })),
    ).toBe(`${dir}/${V}/${C}.json`);
    expect(writeProven(record('2026-12-03', { 'secure-port': flag(3, 4) }, 'kubeadm'))).toBe(
      `${dir}/${V}/${C}.kubeadm.json`,
    );
  });
  afterAll(() => {
    if (before === undefined) delete process.env.HARDWIRE_PROVEN_DIR;
    else process.env.HARDWIRE_PROVEN_DIR = before;
    rmSync(dir, { recursive: true, force: true });
  });

  it('provenCell reads the plane\'s own record; a plane with no record, or a flag not in it, is "-"', () => {
    expect(provenCell(C, 'secure-port', V)).toBe(HW);
    expect(provenCell(C, 'secure-port', V, 'kubeadm')).toBe(KA);
    expect(provenCell(C, 'profiling', V)).toBe(`hit 6/8 (1 off), ${V} 2026-12-02`);
    expect(provenCell(C, 'profiling', V, 'kubeadm')).toBe('-');
    expect(provenCell(C, 'secure-port', V, 'k0s')).toBe('-');
  });

  it("compare's matrix: each plane that passes the flag, in plane order, in Markdown and HTML", () => {
    const planes = {
      hardwire: plane('hardwire', ['secure-port', 'profiling']),
      kubeadm: plane('kubeadm', ['secure-port']),
      k0s: plane('k0s', ['secure-port']),
      yours: emptyPlane('yours', 'not asked'),
    };
    const rows = Object.fromEntries(flagRows(C, planes, V, []).map((r) => [r.name, r.provenLive]));
    expect(rows).toEqual({
      'secure-port': { hardwire: HW, kubeadm: KA, k0s: '-' },
      profiling: { hardwire: `hit 6/8 (1 off), ${V} 2026-12-02` },
    });
    const params: ClusterParams = {
      kubernetesVersion: V,
      clusterName: 'fixture',
      nodeName: 'node1',
      advertiseAddress: '10.0.0.2',
      serviceCIDR: '10.96.0.0/12',
      podCIDR: '10.244.0.0/16',
      dnsDomain: 'cluster.local',
      extraSANs: [],
      firstServiceIp: '10.96.0.1',
    };
    const report = buildReport(params, planes);
    const both = `hardwire: ${HW} · kubeadm: ${KA} · k0s: -`;
    expect(
      markdown(report)
        .split('\n')
        .find((l) => l.startsWith('| --secure-port ')),
    ).toMatch(new RegExp(`\\| ${both} \\|$`));
    expect(
      markdown(report)
        .split('\n')
        .find((l) => l.startsWith('| --profiling ')),
    ).toMatch(/\| hardwire: hit 6\/8 \(1 off\), [^|]* 2026-12-02 \|$/);
    expect(unbroken(html(report))).toContain(`<td>${both}</td></tr>`);
  });
});
