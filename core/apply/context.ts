// Everything one wire run knows, passed explicitly from phase to phase (no globals).
import type { Inventory } from '../inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import type { PkiResult } from '../pki/store.ts';
import type { HostTree } from '../render/host-tree.ts';
import type { ReadSession } from '../transport/index.ts';
import type { HostFacts, Plan } from '../plan/types.ts';
import type { HostWant } from '../plan/build.ts';
import { Wet } from './wet.ts';
import { randomBytes } from 'node:crypto';
import type { CheckResult } from '../preflight/checks.ts';
import type { NodeProfile } from '../preflight/profile.ts';

export interface LocalBinary {
  name: string;
  path: string;
  sha256: string;
  version: string;
  source: string;
}

export interface WireOptions {
  dryRun: boolean;
  acceptNewHostKeys: boolean;
  /** Per-gate timeout. */
  gateTimeoutMs: number;
  /** Hash every file on every host and every cached binary, whatever their stat says. */
  verifyHashes?: boolean;
}

export interface Restart {
  host: string;
  unit: string;
  action: 'start' | 'restart';
}

export interface SnapshotInfo {
  file: string;
  from: string;
  revision: number;
  totalKey: number;
  hash: number;
  sizeBytes: number;
}

export interface WireContext {
  /** Names this run's backups and snapshot: sortable UTC time plus a random suffix. */
  runId: string;
  inv: Inventory;
  stateDir: string;
  clusterDir: string;
  opts: WireOptions;
  log: Logger;
  wet: Wet;
  pki?: PkiResult;
  trees: Map<string, HostTree>;
  /** This machine's architecture's binaries, by name. */
  binaries: Map<string, LocalBinary>;
  /** Every local file pushed as binaries are (streamed), by its sha256: each architecture's binaries and images. */
  localFiles: Map<string, string>;
  wants: HostWant[];
  /** Read-only: host changes go through wet.run, which holds the writable sessions. */
  sessions: Map<string, ReadSession>;
  facts: Map<string, HostFacts>;
  /** Every preflight check on every host (phases/preflight.ts). */
  preflight?: CheckResult[];
  /** What each host's kernel and init give the node models, as preflight read it. */
  profiles: Map<string, NodeProfile>;
  plan?: Plan;
  restarted: Restart[];
  durationsMs: Record<string, number>;
  snapshot?: SnapshotInfo | { skipped: string };
  /** Hosts where this run backed up files it overwrote. */
  backups: string[];
}

/** What newRunId makes, exactly: 20261130T052500Z-1a2b. rollback takes nothing else, so a run id cannot walk out of the backup directory. */
export const RUN_ID = /^\d{8}T\d{6}Z-[0-9a-f]{4}$/;

export function newRunId(now = new Date()): string {
  return `${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomBytes(2).toString('hex')}`;
}

export function newContext(
  inv: Inventory,
  stateDir: string,
  clusterDir: string,
  opts: WireOptions,
  log: Logger,
): WireContext {
  return {
    runId: newRunId(),
    backups: [],
    inv,
    stateDir,
    clusterDir,
    opts,
    log,
    wet: new Wet(opts.dryRun, log),
    trees: new Map(),
    binaries: new Map(),
    localFiles: new Map(),
    wants: [],
    sessions: new Map(),
    facts: new Map(),
    profiles: new Map(),
    restarted: [],
    durationsMs: {},
  };
}

export function session(ctx: WireContext, host: string): ReadSession {
  const s = ctx.sessions.get(host);
  if (!s) throw new Error(`no SSH session for ${host}`);
  return s;
}
