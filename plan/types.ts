// The plan: what wire will change on each host. Built by a pure function from what is wanted and
// what was read, so it is the dry-run output and unit tests cover it without hosts.
import type { ComponentName } from '../components/models/index.ts';

export interface WantedFile {
  path: string;
  mode: number;
  sha256: string;
  readBy: ComponentName[];
  kind: 'file' | 'binary';
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

export interface HostFacts {
  host: string;
  hashes: Map<string, string | null>;
  units: Map<ComponentName, UnitFacts>;
  /** Components an interrupted run changed files for but did not restart. */
  pendingRestart?: Set<ComponentName>;
}

export interface FileChange extends WantedFile {
  reason: 'missing' | 'changed';
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
