// On-host backups of what a wire run overwrote or created, for `hardwire rollback <run-id>`.
import { HOST_STATE_DIR } from '../lib/constants.ts';
import type { ComponentName } from '../components/models/index.ts';

export const BACKUP_ROOT = `${HOST_STATE_DIR}/backup`;
export const BACKUP_RECORD = 'backup.json';
export const KEEP_BACKUPS = 5;

export interface BackupRecord {
  runId: string;
  overwritten: { path: string; readBy: ComponentName[] }[];
  created: { path: string; readBy: ComponentName[] }[];
}

/** Keeps the newest N run directories (run ids sort by time). Fixed script, arguments passed as $1 $2. */
export const PRUNE_SCRIPT = 'cd "$1" && ls -1 | sort | head -n -"$2" | while read -r d; do rm -rf -- "$d"; done';

export function parseBackupRecord(text: string): BackupRecord {
  const r = JSON.parse(text) as BackupRecord;
  if (typeof r.runId !== 'string' || !Array.isArray(r.overwritten) || !Array.isArray(r.created)) throw new Error('malformed backup record');
  return r;
}
