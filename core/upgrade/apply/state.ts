// What the upgrade's own phases share beside wire's context: kept apart so the phases need not import the phase list.
import type { LocalBinary } from '../../apply/context.ts';
import type { Running, UpgradeStep } from '../steps.ts';

/** What the upgrade's own phases share, beside wire's context (whose inventory is at the target). */
export interface UpgradeRun {
  to: string;
  /** The etcd versions to pass through, the target's last. */
  etcdPath: string[];
  /** The etcd binaries of each hop that is not the version table's etcd for the target (v3.6.16; the --etcd target), by version. */
  hops: Map<string, Map<string, LocalBinary>>;
  running: Map<string, Running>;
  steps: UpgradeStep[];
  /** Steps finished, for the report: host, what, seconds. */
  done: { host: string; restart: string[]; version: string; seconds: number }[];
}
