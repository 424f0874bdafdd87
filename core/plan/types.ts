// The plan: what wire will change on each host. Built by a pure function from what is wanted and
// what was read, so it is the dry-run output and unit tests cover it without hosts.
import type { ComponentName } from '../components/models/index.ts';
import type { HostRecord } from '../apply/manifest.ts';
import type { Arch } from '../../lib/arch.ts';

export interface WantedFile {
  path: string;
  mode: number;
  sha256: string;
  readBy: ComponentName[];
  kind: 'file' | 'binary';
  /** A binary's or image's architecture: the host's, as preflight read it. */
  arch?: Arch;
}

export interface UnitFacts {
  /** systemd ActiveState: active, inactive, failed, activating... */
  activeState: string;
  /** systemd LoadState: loaded, not-found... */
  loadState: string;
  /** ActiveEnterTimestampMonotonic, to prove a no-op run restarted nothing. */
  activeEnterMonotonic: string;
  enabled: boolean;
}

export interface AccountFacts {
  exists: boolean;
  /** Each owned directory's "<owner>:<group> <octal mode>", undefined when it does not exist. */
  owns: Map<string, string | undefined>;
}

export interface HostFacts {
  host: string;
  hashes: Map<string, string | null>;
  /** File modes as read; a file with the right content but the wrong mode is rewritten. */
  modes?: Map<string, number>;
  /** The host's record of what hardwire installed (apply/manifest.ts). */
  record?: HostRecord;
  /** Paths whose stat no longer matches the record (or that it lacks): hashed this run, recorded again after push. */
  stale?: string[];
  /** How many files were hashed on the host this run. */
  hashed?: number;
  units: Map<ComponentName, UnitFacts>;
  /** Components an interrupted run changed files for but did not restart. */
  pendingRestart?: Set<ComponentName>;
  /** The system users components run as, read with the files (apply/phases/accounts.ts acts on them). */
  accounts?: Map<string, AccountFacts>;
}

export interface FileChange extends WantedFile {
  /** mode: same content, wrong permissions (rewritten with the wanted mode). */
  reason: 'missing' | 'changed' | 'mode';
}

export interface UnitAction {
  component: ComponentName;
  action: 'start' | 'restart' | 'none';
  reasons: string[];
}

export interface HostPlan {
  host: string;
  changes: FileChange[];
  units: UnitAction[];
  daemonReload: boolean;
}

export interface Plan {
  hosts: HostPlan[];
  noop: boolean;
}
