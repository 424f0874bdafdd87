import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Phase } from '../phase.ts';
import { session, type WireContext } from '../context.ts';
import { readFacts } from '../facts.ts';
import { writeFileAtomic } from '../../../lib/fsx.ts';

/**
 * A host's files are all re-hashed, whatever their stat says, with --verify-hashes or when the last
 * full hash of that host is more than a day old. When that was is kept on the operator's side, so a
 * no-op run writes nothing on the hosts.
 */
export const FULL_HASH_EVERY_MS = 24 * 3600 * 1000;

const verifiedFile = (ctx: WireContext) => join(ctx.clusterDir, 'hosts-hashed.json');

function lastFullHash(ctx: WireContext): Record<string, string> {
  try {
    return existsSync(verifiedFile(ctx))
      ? (JSON.parse(readFileSync(verifiedFile(ctx), 'utf8')) as Record<string, string>)
      : {};
  } catch {
    return {};
  }
}

export const readPhase: Phase = {
  id: 'read',
  title:
    "Read each host (file stats and the host's record; hashes where a stat moved; unit states; system users)",
  async run(ctx) {
    const last = lastFullHash(ctx);
    const now = Date.now();
    const full = new Set<string>();
    await Promise.all(
      ctx.wants.map(async (w) => {
        const verifyHashes =
          ctx.opts.verifyHashes === true ||
          !(now - Date.parse(last[w.host] ?? '') < FULL_HASH_EVERY_MS);
        if (verifyHashes) full.add(w.host);
        const accounts = (ctx.trees.get(w.host)?.models ?? []).flatMap((m) =>
          m.account ? [m.account] : [],
        );
        ctx.facts.set(
          w.host,
          await readFacts(
            w.host,
            session(ctx, w.host),
            w.files.map((f) => f.path),
            w.components,
            { verifyHashes, accounts },
          ),
        );
      }),
    );
    const hashed = ctx.wants
      .map((w) => ctx.facts.get(w.host)?.hashed ?? 0)
      .reduce((a, b) => a + b, 0);
    ctx.log.info(
      `  hashed ${hashed} file(s) on the hosts${full.size ? ` (all of them on ${[...full].join(', ')})` : ''}; the rest matched their recorded stat`,
    );
    if (full.size > 0 && !ctx.opts.dryRun) {
      const at = new Date(now).toISOString();
      writeFileAtomic(
        verifiedFile(ctx),
        `${JSON.stringify({ ...last, ...Object.fromEntries([...full].map((h) => [h, at])) }, null, 2)}\n`,
      );
    }
  },
};
