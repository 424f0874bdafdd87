// Keeps each host's record (apply/manifest.ts) true after a push: the files this run wrote, and
// those it had to re-hash because their stat moved, get their sha256 and their stat as they are
// now. Written only when one of those exists, so a no-op run writes nothing.
import type { WireContext } from './context.ts';
import { session } from './context.ts';
import { MANIFEST_PATH, formatRecord, statMany, type HostRecord } from './manifest.ts';

export async function recordHost(ctx: WireContext, host: string): Promise<void> {
  const facts = ctx.facts.get(host);
  const plan = ctx.plan!.hosts.find((h) => h.host === host)!;
  const want = ctx.wants.find((w) => w.host === host)!;
  const refresh = new Set([...plan.changes.map((c) => c.path), ...(facts?.stale ?? [])]);
  if (refresh.size === 0) return;
  await ctx.wet.run(host, `update ${MANIFEST_PATH} (${refresh.size} file(s))`, async (w) => {
    const now = await statMany(session(ctx, host), [...refresh]);
    const record: HostRecord = new Map(facts?.record ?? []);
    for (const f of want.files) {
      const st = now.get(f.path);
      // Only a file that is now what was wanted gets the wanted sha256; anything else is left to be re-hashed.
      if (st && refresh.has(f.path) && st.mode === f.mode)
        record.set(f.path, { sha256: f.sha256, ...st });
      else if (!record.has(f.path))
        record.set(f.path, {
          sha256: '',
          size: -1,
          ino: -1,
          mtime: '',
          ctime: '',
          mode: -1,
          owner: '',
        });
    }
    await w.writeFileAtomic(MANIFEST_PATH, formatRecord(record), {
      mode: 0o644,
      owner: 'root:root',
    });
  });
}
