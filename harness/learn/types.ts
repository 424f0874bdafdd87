// What one exercise of `hardwire learn` is: the task as the curriculum states it, the commands a
// learner types (printed by `learn ID`, run word for word by --demo), what to watch for, the source
// lines that produce the behaviour, and a check that reads the cluster for the learner's result.
import type { Inventory } from '../../core/inventory/load.ts';
import type { WireContext } from '../../core/apply/context.ts';
import type { KubeCreds } from '../../core/transport/kube-api.ts';
import type { Logger } from '../../lib/log.ts';
import type { SourceSite } from '../drills/index.ts';

/** A source line that produces the behaviour, and a text the line holds (re-read by the cites test). */
export interface Cite {
  site: SourceSite;
  holds: string;
  why: string;
  /** A tracepoint can show the line running: `learn ID --demo --live` sets one there. */
  live?: boolean;
}

/** One command's run: the line as typed, its exit code and what it printed (stdout and stderr). */
export interface Typed {
  line: string;
  code: number;
  output: string;
}

/** One audit event, the fields the checks read. */
export interface AuditEvent {
  verb: string;
  requestURI: string;
  user: { username: string };
  userAgent?: string;
  objectRef?: {
    resource?: string;
    namespace?: string;
    name?: string;
    subresource?: string;
    apiGroup?: string;
  };
  responseStatus?: { code?: number; reason?: string; message?: string };
  stageTimestamp: string;
}

export interface LearnEnv {
  inv: Inventory;
  ctx: WireContext;
  log: Logger;
  creds: KubeCreds;
  kubeconfig: string;
  /** The namespace of the task list. */
  ns: string;
  /** Options that reach the same cluster, for the demo's `hardwire` (--inventory, --state-dir, ...). */
  cliArgs: readonly string[];
  /** Runs the lines in one bash, as typed, with kubectl on PATH and KUBECONFIG set; never throws on a line's exit code. */
  sh(lines: readonly string[]): Promise<Typed[]>;
  /** GET (or another verb) against the apiserver as the admin, parsed; status kept. */
  api<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<{ status: number; json: T }>;
  /** Every audit event on every control-plane host whose line holds `needle` (a plain string). */
  audit(needle: string): Promise<AuditEvent[]>;
  /** etcdctl on the first etcd host, with the cluster's client certificate; stdout. */
  etcdctl(args: readonly string[]): Promise<string>;
}

/** Why the result is not there; none means it is. */
export type Findings = string[];

export interface Exercise {
  /** The curriculum's id: the task list's 0.1..5.x, a module's 3.1a.., EC1... */
  id: string;
  section: string;
  title: string;
  /** What to do, in the curriculum's words. */
  task: string[];
  /** What a learner types, in order; `learn ID` prints them and --demo runs them through bash. */
  commands: string[];
  /** Run quietly before --demo, so a second demo starts from the same place. */
  reset?: string[];
  /** What to watch for in the output. */
  watch: string[];
  cites: Cite[];
  /** Reads the cluster: the learner's result, or why it is not there. */
  check(env: LearnEnv): Promise<Findings>;
}
