// The source lines `learn` cites, at the pinned version, and how they are shown at the version the
// cluster runs: the same text is looked for in that version's module source when it is on this
// machine, else the pinned line is shown with the version it is at. test/learn.test.ts re-opens each.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PINNED_KUBERNETES } from '../../lib/constants.ts';
import {
  citation,
  findFormat,
  sourcePath,
  STAGING_VERSION,
  type SourceSite,
} from '../drills/index.ts';
import type { Cite, Exercise } from './types.ts';

/** A cite factory for one module at one version. */
export const citeIn =
  (module: string, version: string) =>
  (file: string, line: number, holds: string, why: string): Cite => ({
    site: { module, version, file, line },
    holds,
    why,
  });

/** A module's line at the pinned version. */
export const APISERVER = citeIn('k8s.io/apiserver', STAGING_VERSION);
export const APIMACHINERY = citeIn('k8s.io/apimachinery', STAGING_VERSION);
export const KUBERNETES = citeIn('k8s.io/kubernetes', PINNED_KUBERNETES);
export const APIEXTENSIONS = citeIn('k8s.io/apiextensions-apiserver', STAGING_VERSION);
export const KUBECTL = citeIn('k8s.io/kubectl', STAGING_VERSION);

export interface CiteFailure {
  exercise: string;
  citation: string;
  reason: string;
}

/** Each cited line must hold its text at the version it names. */
export function verifyCites(exercises: readonly Exercise[]): CiteFailure[] {
  const failures: CiteFailure[] = [];
  for (const e of exercises)
    for (const c of e.cites) {
      const lines = findFormat(c.site, c.holds);
      if (!lines.includes(c.site.line))
        failures.push({
          exercise: e.id,
          citation: citation(c.site),
          reason: `the line does not hold ${JSON.stringify(c.holds)} (it is at: ${lines.join(', ') || 'none'})`,
        });
    }
  return failures;
}

/** The staging modules' version for a Kubernetes version (v1.37.2 → v0.37.2). */
const staging = (k8s: string) => k8s.replace(/^v1\./, 'v0.');

/** The same file first, then the other Go files of its package (code moves between files across releases). */
function candidates(site: SourceSite): SourceSite[] {
  let names: string[] = [];
  try {
    names = readdirSync(dirname(sourcePath(site)));
  } catch {
    return [];
  }
  const dir = dirname(site.file);
  return [
    site,
    ...names
      .filter((n) => n.endsWith('.go') && !n.endsWith('_test.go') && join(dir, n) !== site.file)
      .sort()
      .map((n) => ({ ...site, file: join(dir, n) })),
  ];
}

/** A cite a tracepoint can show: an executable statement that runs when the behaviour happens. */
export const live = (c: Cite): Cite => ({ ...c, live: true });

/**
 * The cited line at the version the cluster runs: the line that holds the same text nearest the
 * pinned one (in the same file, else in its package), when that version's source is here.
 */
export function siteAt(c: Cite, running: string): SourceSite | undefined {
  if (running === PINNED_KUBERNETES) return c.site;
  const version = c.site.module === 'k8s.io/kubernetes' ? running : staging(running);
  // A text the file holds several times (delegator.go's `return c.storage.GetList(...)`): the same
  // occurrence by order, when the running file has it; the nearest line moves to another branch.
  const nth = findFormat(c.site, c.holds).indexOf(c.site.line);
  for (const [i, site] of candidates({ ...c.site, version }).entries()) {
    const lines = findFormat(site, c.holds);
    if (lines.length === 0) continue;
    const line =
      (i === 0 ? lines[nth] : undefined) ??
      lines.reduce((a, b) => (Math.abs(b - c.site.line) < Math.abs(a - c.site.line) ? b : a));
    return { ...site, line };
  }
  return undefined;
}

/** The citation at the version the cluster runs (siteAt); otherwise the pinned line, saying which version it is at. */
export function citeAt(c: Cite, running: string): { ref: string; note?: string } {
  const site = siteAt(c, running);
  if (site) return { ref: citation(site) };
  return {
    ref: citation(c.site),
    note: `at ${c.site.version}; the cluster runs ${running}, and the text is not in its source on this machine`,
  };
}
