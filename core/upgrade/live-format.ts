// The live section of the plan: verify's gates and the objects stored in APIs the target removes.
import type { Live } from './live.ts';
import type { StoredApiRow } from './stored-apis.ts';

export const LIVE_HEAD = ['removed API', 'status', 'removed at (to)', 'objects', 'note'];

export function liveTitle(live: Live, to: string): string {
  if (!live.checked) return `live checks skipped: ${live.skipped}`;
  const how = live.via
    ? `, listed through ${live.via}`
    : `: verify's ${live.gatesPassed} gates passed`;
  return `live cluster (${live.server})${how}; APIs ${to} stops serving, listed at their version`;
}

const status = (r: StoredApiRow) =>
  r.objects.length ? 'blocking' : r.served ? 'served, empty' : 'not served';

export function liveRows(live: Live): string[][] {
  if (!live.checked) return [];
  return live.apis.map((r) => [
    `${r.group}/${r.version} ${r.kind}`,
    status(r),
    r.removedAt,
    r.objects.length ? `${r.objects.length}: ${r.objects.join(', ')}` : '0',
    r.note,
  ]);
}

/** Kinds with objects stored: each blocks, as a removed flag does. */
export function liveBlocking(live: Live | undefined): number {
  return live?.checked ? live.apis.filter((r) => r.objects.length > 0).length : 0;
}
