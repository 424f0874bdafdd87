// The committed "proven live" records (core/flags/proven/<version>/<component>.json, written by
// `flags prove --record`, issue 25) against the flag map they claim to prove: every site a record
// names is a site the map cites for that flag at that version, in the map's order; each hit lies in
// the function delve named, read back from the Go module cache; and `hardwire flags` and compare's
// flag matrix show the record as the "proven live" column (verdict, sites hit, version, date).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hardwire } from './helpers/cli.ts';
import { loadFlagMap, normalizeFlagName, siteRef } from '../core/flags/map.ts';
import type { ProvenRecord } from '../core/flags/proven.ts';
import { flagRows } from '../harness/compare/build.ts';
import { emptyPlane, type Component, type PlaneData } from '../harness/planes/types.ts';
import { enclosingFunc, sameFunction, sourceLines } from '../harness/prove/source.ts';
import { decideSite, unitFlags } from '../harness/prove/decide.ts';
import { PINNED_KUBERNETES } from '../lib/constants.ts';
import { repoRoot } from '../lib/paths.ts';

const ROOT = join(repoRoot, 'core', 'flags', 'proven');
/** The components `flags prove --record` was run for at the pinned version (each on a 1-host lab). */
const RECORDED = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];

function records(): { file: string; r: ProvenRecord }[] {
  if (!existsSync(ROOT)) return [];
  return readdirSync(ROOT).flatMap((v) =>
    readdirSync(join(ROOT, v)).map((f) => ({
      file: `${v}/${f}`,
      r: JSON.parse(readFileSync(join(ROOT, v, f), 'utf8')) as ProvenRecord,
    })),
  );
}

describe('committed flags prove records', () => {
  const all = records();
  /** Every record at the pinned version: hardwire's unit's (tool '') and another tool's flags (`--flags-of kubeadm`). */
  const CASES = all
    .filter(({ r }) => r.kubernetesVersion === PINNED_KUBERNETES)
    .map(({ r }) => [r.component, r.flagsOf ?? ''] as const);
  const record = (component: string, tool: string) =>
    all.find(
      (x) =>
        x.r.component === component &&
        x.r.kubernetesVersion === PINNED_KUBERNETES &&
        (x.r.flagsOf ?? '') === tool,
    )!.r;

  it(`one per proven component at ${PINNED_KUBERNETES}, each where its component and version say`, () => {
    expect(
      all
        .filter(({ r }) => r.kubernetesVersion === PINNED_KUBERNETES && !r.flagsOf)
        .map(({ r }) => r.component)
        .sort(),
    ).toEqual(RECORDED);
    for (const { file, r } of all) {
      // Another tool's flags (`flags prove --flags-of kubeadm --record`) are kept apart: <component>.<tool>.json.
      expect(file).toBe(
        `${r.kubernetesVersion}/${r.component}${r.flagsOf ? `.${r.flagsOf}` : ''}.json`,
      );
      expect(r.date, file).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(r.debugSha256, file).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it.each(CASES)(
    '%s %s: every recorded site is one the map cites for that flag, in its order; counts and verdicts agree',
    (component, tool) => {
      const r = record(component, tool);
      const map = loadFlagMap(component, r.kubernetesVersion);
      expect(Object.keys(r.flags).length).toBeGreaterThan(0);
      for (const [flag, f] of Object.entries(r.flags)) {
        if (f.verdict === 'not provable' && f.at.length === 0) {
          expect(f.reason, `--${flag}`).toBeTruthy();
          continue;
        } // another tool's flag that could not run here
        const entry = map.flags.find((x) => x.name === normalizeFlagName(flag));
        expect(
          entry,
          `--${flag} is not in the ${component} map at ${r.kubernetesVersion}`,
        ).toBeDefined();
        expect(
          f.at.map((s) => s.ref),
          `--${flag}`,
        ).toEqual(entry!.consumedAt.map(siteRef));
        expect(f.sites).toBe(f.at.length);
        expect(f.sitesHit).toBe(f.at.filter((s) => s.status === 'hit').length);
        expect(f.sitesOff).toBe(f.at.filter((s) => s.status === 'off').length);
        expect(f.verdict === 'hit', `--${flag}`).toBe(f.sitesHit > 0);
        if (f.verdict !== 'hit') expect(f.reason, `--${flag}`).toBeTruthy();
      }
    },
  );

  it.each(RECORDED)(
    "%s: each site's status re-derives from the map and the run's argv (off: ruled out by the unit's flags)",
    (component) => {
      const { r } = all.find(
        (x) =>
          x.r.component === component &&
          x.r.kubernetesVersion === PINNED_KUBERNETES &&
          !x.r.flagsOf,
      )!;
      const map = loadFlagMap(component, r.kubernetesVersion);
      // The record's flags are the argv's, in its order.
      expect(
        r.argv.slice(1).map((a) => a.slice(2, a.includes('=') ? a.indexOf('=') : undefined)),
      ).toEqual(Object.keys(r.flags));
      const unit = unitFlags(r.argv, map);
      for (const [flag, f] of Object.entries(r.flags)) {
        const entry = map.flags.find((x) => x.name === normalizeFlagName(flag))!;
        for (const s of f.at) {
          const site = entry.consumedAt.find((c) => siteRef(c) === s.ref)!;
          const traced = s.status === 'unset' ? 'unset' : s.hits > 0 ? 'hit' : 'not hit';
          const decided = decideSite(site, traced, unit);
          // Off in this run (guards.ts): a miss the unit's flags do not decide, whose evidence names one of the map's guards of the site.
          const live = decided.status === 'not hit' && s.live !== undefined;
          if (live)
            expect(
              site.guards?.map((g) => g.at.replace(/^[^@]+@[^/]+\//, '')),
              s.live,
            ).toContain(/^ruled out in this run: (\S+:\d+) /.exec(s.live!)?.[1]);
          const want = live
            ? { status: 'off', ruledOut: s.live, contradiction: undefined }
            : decided;
          expect(
            { status: s.status, ruledOut: s.ruledOut, contradiction: s.contradiction },
            `--${flag} ${s.ref}`,
          ).toEqual({
            status: want.status,
            ruledOut: want.ruledOut,
            contradiction: want.contradiction,
          });
          if (s.status === 'off') expect(s.hits).toBe(0);
        }
      }
    },
  );

  it.each(CASES)(
    '%s %s: each hit site lies in the function delve stopped in, read back from the module cache',
    (component, tool) => {
      const r = record(component, tool);
      const hits = Object.values(r.flags).flatMap((f) => f.at.filter((s) => s.status === 'hit'));
      expect(hits.length).toBeGreaterThan(0);
      for (const s of hits) {
        const [, module, version, file, line] = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(s.ref)!;
        const lines = sourceLines(module!, version!, file!);
        expect(lines, `${s.ref} is not in the module cache`).toBeDefined();
        expect(
          sameFunction(enclosingFunc(lines!, Number(line)), s.function!),
          `${s.ref} in ${enclosingFunc(lines!, Number(line))}, delve: ${s.function}`,
        ).toBe(true);
      }
    },
  );

  it.each(RECORDED)(
    "%s: `hardwire flags` and compare's matrix show the record as the proven-live column",
    (component) => {
      const { r } = all.find(
        (x) =>
          x.r.component === component &&
          x.r.kubernetesVersion === PINNED_KUBERNETES &&
          !x.r.flagsOf,
      )!;
      const cell = (flag: string) => {
        const f = r.flags[flag]!;
        return `${f.verdict} ${f.sitesHit}/${f.sites}${f.sitesOff ? ` (${f.sitesOff} off)` : ''}, ${r.kubernetesVersion} ${r.date}`;
      };
      const out = hardwire(['flags', component]);
      expect(out.code, out.stderr).toBe(0);
      const lineOf = (flag: string) =>
        out.stdout.split('\n').find((l) => l.startsWith(`--${flag} `));
      for (const flag of Object.keys(r.flags))
        expect(lineOf(flag), `--${flag}`).toContain(cell(flag));
      // A flag the unit does not pass has no verdict.
      const unproven = loadFlagMap(component, r.kubernetesVersion).flags.find(
        (f) => !(f.name in r.flags),
      )!;
      expect(lineOf(unproven.name)).not.toMatch(/ (hit|not hit|not provable) \d+\/\d+, /);
      // Compare's matrix, from hardwire's plane passing the recorded flags.
      const plane: PlaneData = {
        ...emptyPlane('hardwire', 'test', true),
        commands: {
          [component]: {
            argv: ['x', ...Object.keys(r.flags).map((f) => `--${f}=1`)],
            source: 'test',
          },
        },
      };
      const rows = flagRows(
        component as Component,
        {
          hardwire: plane,
          kubeadm: emptyPlane('kubeadm', 'test'),
          k0s: emptyPlane('k0s', 'test'),
          yours: emptyPlane('yours', 'test'),
        },
        r.kubernetesVersion,
        [],
      );
      expect(Object.fromEntries(rows.map((row) => [row.name, row.provenLive]))).toEqual(
        Object.fromEntries(Object.keys(r.flags).map((f) => [f, { hardwire: cell(f) }])),
      );
    },
  );
});
