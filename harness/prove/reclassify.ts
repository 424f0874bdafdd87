// A committed "proven live" record re-classified without a lab: each site's status re-derived
// from what the run traced (hit, not hit, no tracepoint), the flag map and the run's argv
// (decide.ts), so that a change to the decision, or to the map's conditions, shows in the records.
import type { FlagMap } from '../../core/flags/map.ts';
import { normalizeFlagName, siteRef } from '../../core/flags/map.ts';
import type { ProvenRecord, ProvenSite } from '../../core/flags/proven.ts';
import { InputError } from '../../lib/errors.ts';
import { decideSite, unitFlags } from './decide.ts';

/** What the run itself saw at a recorded site: an off site was traced and not hit. */
const traced = (s: ProvenSite) =>
  s.status === 'unset' ? 'unset' : s.status === 'hit' ? 'hit' : 'not hit';

export function reclassify(r: ProvenRecord, map: FlagMap): ProvenRecord {
  if (!Array.isArray(r.argv) || r.argv.length === 0)
    throw new InputError(
      'argv',
      `the ${r.component} record has no argv; prove it again with --record`,
    );
  const unit = unitFlags(r.argv, map);
  const flags = Object.fromEntries(
    Object.entries(r.flags).map(([name, f]) => {
      const entry = map.flags.find((x) => x.name === normalizeFlagName(name));
      const at = f.at.map((s): ProvenSite => {
        const site = entry?.consumedAt.find((c) => siteRef(c) === s.ref);
        if (!site)
          throw new InputError(
            'map',
            `does not cite ${s.ref} for --${name} of ${r.component} any more; prove it again with --record`,
          );
        const decided = decideSite(site, traced(s), unit);
        // What delve saw at a guard is the run's own evidence: kept whatever the map now decides.
        const { status, ruledOut, contradiction } =
          decided.status === 'not hit' && s.live
            ? { status: 'off' as const, ruledOut: s.live, contradiction: undefined }
            : decided;
        return {
          ref: s.ref,
          status,
          hits: s.hits,
          ...(s.function ? { function: s.function } : {}),
          ...(s.atShutdown ? { atShutdown: true } : {}),
          ...(ruledOut ? { ruledOut } : {}),
          ...(s.live ? { live: s.live } : {}),
          ...(contradiction ? { contradiction } : {}),
        };
      });
      const notHit = at.find((s) => s.status === 'not hit') ?? at.find((s) => s.status === 'off');
      const reason =
        f.verdict === 'not hit' && notHit?.status === 'off' ? notHit.ruledOut : f.reason;
      return [
        name,
        {
          verdict: f.verdict,
          sitesHit: at.filter((s) => s.status === 'hit').length,
          sitesOff: at.filter((s) => s.status === 'off').length,
          sites: f.sites,
          ...(reason ? { reason } : {}),
          at,
        },
      ];
    }),
  );
  return { ...r, flags };
}
