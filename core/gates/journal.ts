// The last lines a unit logged, for gate failures: the real error, not a summary of it.
import type { ReadSession as Session } from '../transport/index.ts';

export async function journalTail(s: Session, unit: string, lines = 20): Promise<string[]> {
  try {
    const r = await s.exec(
      ['journalctl', '-u', unit, '-n', String(lines), '--no-pager', '-o', 'short-iso'],
      { allowFail: true, timeoutMs: 10_000 },
    );
    return r.stdout.trimEnd().split('\n').filter(Boolean);
  } catch (err) {
    return [`(could not read the journal: ${err instanceof Error ? err.message : String(err)})`];
  }
}
