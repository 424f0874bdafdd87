// "Proven live" (issue 25): what `flags prove --record` saw for each flag, kept beside the flag map
// (flags/proven/<version>/<component>.json; not under data/, which --regenerate rebuilds byte for
// byte) so that the map and compare's matrix can show it.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../lib/paths.ts';

/**
 * One cited read site as the run saw it; `function` is where delve stopped, for a hit; `atShutdown`:
 * first hit after the gate, once the debuggee was sent SIGTERM; `off`: not hit, and ruled out by the
 * run's own flags (`ruledOut` says how; on a hit, a `contradiction` unless the condition shares the
 * site's line), harness/prove/decide.ts; `live`: off in this run, a guard delve evaluated having
 * kept the read out at every stop (harness/prove/guards.ts).
 */
export interface ProvenSite {
  ref: string;
  status: 'hit' | 'not hit' | 'off' | 'unset';
  hits: number;
  function?: string;
  atShutdown?: true;
  ruledOut?: string;
  live?: string;
  contradiction?: true;
}

export interface ProvenFlag {
  verdict: 'hit' | 'not hit' | 'not provable';
  sitesHit: number;
  /** Sites not hit that the run's flags rule out. */
  sitesOff: number;
  sites: number;
  /** Why a flag is not hit or not provable. */
  reason?: string;
  /** With another tool's flags: its value, where the run's differs (a path mapped to hardwire's file). */
  original?: string;
  /** Every site the map cited for the flag at the run's version, in the map's order. */
  at: ProvenSite[];
}

export interface ProvenRecord {
  component: string;
  kubernetesVersion: string;
  /** The day of the run (UTC), and the binary it ran: the debug build's sha256, delve's version. */
  date: string;
  debugSha256: string;
  dlv: string;
  /** The run's argv (argv[0] the binary): with the map, what each site's status is re-derived from. */
  argv: string[];
  /** Whose flags ran: absent for hardwire's unit; `kubeadm` for `flags prove --flags-of kubeadm` (kept as <component>.kubeadm.json). */
  flagsOf?: string;
  flags: Record<string, ProvenFlag>;
}

// HARDWIRE_PROVEN_DIR: read and write records there instead, so tests need not touch the committed ones.
const provenDir = (version: string) =>
  join(process.env.HARDWIRE_PROVEN_DIR ?? join(repoRoot, 'core', 'flags', 'proven'), version);
const recordFile = (component: string, version: string, flagsOf?: string) =>
  join(provenDir(version), `${component}${flagsOf ? `.${flagsOf}` : ''}.json`);

export function writeProven(r: ProvenRecord): string {
  const file = recordFile(r.component, r.kubernetesVersion, r.flagsOf);
  mkdirSync(provenDir(r.kubernetesVersion), { recursive: true });
  writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
  return file;
}

export function loadProven(
  component: string,
  version: string,
  flagsOf?: string,
): ProvenRecord | undefined {
  const file = recordFile(component, version, flagsOf);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as ProvenRecord) : undefined;
}

/**
 * The column: "hit 4/4, v1.36.3 2026-12-02", "hit 6/8 (1 off), …" with sites ruled out, or "-" when the flag was not proven.
 * `flagsOf` picks the record of kubeadm's or k0s's flags; without it, hardwire's.
 */
export function provenCell(
  component: string,
  flag: string,
  version: string,
  flagsOf?: string,
): string {
  return provenText(loadProven(component, version, flagsOf), flag);
}

/** provenCell from a record already loaded (compare reads each plane's record once per component). */
export function provenText(r: ProvenRecord | undefined, flag: string): string {
  const f = r?.flags[flag];
  return f && r
    ? `${f.verdict} ${f.sitesHit}/${f.sites}${f.sitesOff ? ` (${f.sitesOff} off)` : ''}, ${r.kubernetesVersion} ${r.date}`
    : '-';
}

/** A record's sites: all, hit, off (ruled out by the run's flags), and the share hit of those not ruled out. */
export function recordCounts(r: ProvenRecord): {
  sites: number;
  hit: number;
  off: number;
  share: number;
  contradictions: number;
} {
  const at = Object.values(r.flags).flatMap((f) => f.at);
  const hit = at.filter((s) => s.status === 'hit').length;
  const off = at.filter((s) => s.status === 'off').length;
  return {
    sites: at.length,
    hit,
    off,
    share: at.length - off ? hit / (at.length - off) : 1,
    contradictions: at.filter((s) => s.contradiction).length,
  };
}
