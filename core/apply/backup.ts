// On-host backups of what a wire run overwrote or created, for `hardwire rollback <run-id>`.
import { HOST_STATE_DIR } from '../../lib/constants.ts';
import type { ComponentName } from '../components/models/index.ts';

export const BACKUP_ROOT = `${HOST_STATE_DIR}/backup`;
export const BACKUP_RECORD = 'backup.json';
export const KEEP_BACKUPS = 5;

export interface BackupRecord {
  runId: string;
  overwritten: { path: string; readBy: ComponentName[] }[];
  created: { path: string; readBy: ComponentName[] }[];
}

/**
 * One round trip: copy each overwritten file ($4...) under the run's dir ($1), write the record from
 * stdin ($3 bytes, so a cut stream is never renamed into place), then keep the newest $2 run dirs
 * (run ids sort by time). A fixed script: paths only ever arrive as arguments.
 */
export const BACKUP_SCRIPT = [
  'set -e',
  'dir=$1; keep=$2; size=$3; shift 3',
  'mkdir -p -m 0700 -- "$dir"',
  'for p do mkdir -p -- "$dir$(dirname -- "$p")"; cp -p -- "$p" "$dir$p"; done',
  `tmp="$dir/${BACKUP_RECORD}.hardwire-new"`,
  '(umask 077; cat > "$tmp")',
  'got=$(wc -c < "$tmp"); if [ "$got" -ne "$size" ]; then echo "short write: $got of $size bytes" >&2; exit 1; fi',
  'sync -- "$tmp" 2>/dev/null || true',
  `mv -f -- "$tmp" "$dir/${BACKUP_RECORD}"`,
  'cd "$(dirname -- "$dir")" && ls -1 | sort | head -n -"$keep" | while read -r d; do rm -rf -- "$d"; done',
].join('\n');

export function parseBackupRecord(text: string): BackupRecord {
  const r = JSON.parse(text) as BackupRecord;
  if (typeof r.runId !== 'string' || !Array.isArray(r.overwritten) || !Array.isArray(r.created))
    throw new Error('malformed backup record');
  return r;
}
