// A component model: the flags a unit passes, each with the reason it is set.
import type { Inventory, Host } from '../../inventory/load.ts';
import type { ConfigCiter, ConfigField } from './config-file.ts';
import { unitOf } from '../../../lib/unit.ts';
import { UNREAD_PROFILE, type NodeProfile } from '../../preflight/profile.ts';

export interface Flag {
  name: string;
  value: string;
  why: string;
  /**
   * A comma-separated list that inventory extraArgs add to instead of replacing (so an added admission
   * plugin cannot drop NodeRestriction); `removedBy` names the flag whose entries are taken out.
   */
  list?: { removedBy?: string };
  /** Where the flag is read, for a component without a flag map (module@version/file:line). */
  readAt?: string;
}

/** A [Service] line besides ExecStart (LoadCredential=), with the reason it is there. */
export interface Directive {
  key: string;
  value: string;
  why: string;
}

/**
 * The system account a unit runs as instead of root (User=, Group=). wire creates it on the host
 * and hands it the directories it owns, before any file is pushed (apply/phases/accounts.ts).
 */
export interface Account {
  user: string;
  /** Directories the account owns (created if missing, chown -R when not), with their mode. */
  owns: { path: string; mode: number }[];
  why: string;
}

/** A file the component reads that hardwire renders from the model itself (the audit policy). */
export interface ModelFile {
  path: string;
  content: string;
  mode: number;
  why: string;
  /** For a component config file (KubeletConfiguration, KubeProxyConfiguration): the fields `content` sets, which the upgrade plan checks in the flag maps' config sections. */
  fields?: ConfigField[];
}

export interface UnitModel<Name extends string = string> {
  /** The registry's name for it (ComponentName, which the registry derives from its specs, so it is not imported here). */
  component: Name;
  description: string;
  documentation: string;
  /** systemd Type=: notify where the binary calls sd_notify. */
  type: 'notify' | 'simple';
  binary: string;
  /** Words between the binary and its flags (a subcommand), each with its reason. */
  args?: { word: string; why: string }[];
  flags: Flag[];
  account?: Account;
  directives?: Directive[];
  /** Placed on the host beside the unit; a change restarts the component. */
  files?: ModelFile[];
}

export interface ModelContext {
  inv: Inventory;
  host: Host;
  /** The flag map's citations for config-file fields; without it a config file carries only its reasons. */
  citeConfig?: ConfigCiter | undefined;
  /** What this host's kernel and init give the node models (preflight); unread: the lab container path. */
  node?: NodeProfile | undefined;
}

export function nodeOf(ctx: Pick<ModelContext, 'node'>): NodeProfile {
  return ctx.node ?? UNREAD_PROFILE;
}

/** Where files live on a host: kubeadm's layout (lib/constants.ts). */
export { K8S_DIR as K, PKI_DIR as PKI, BIN_DIR as BIN } from '../../../lib/constants.ts';

export function flag(name: string, value: string | number | boolean, why: string): Flag {
  return { name, value: String(value), why };
}

const entries = (s: string | undefined) =>
  (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/**
 * A model flag's value with the component's extraArgs applied: replaced, or for a list flag,
 * hardwire's entries then the inventory's, less those its `removedBy` flag names.
 */
export function withExtra(f: Flag, extra: Record<string, string> | undefined): string {
  const given = extra?.[f.name];
  const removed = f.list?.removedBy ? entries(extra?.[f.list.removedBy]) : [];
  if (!f.list) return given ?? f.value;
  if (given === undefined && removed.length === 0) return f.value;
  const merged = [...new Set([...entries(f.value), ...entries(given)])];
  return merged.filter((x) => !removed.includes(x)).join(',');
}

/** Where systemd puts a unit's LoadCredential= files, readable by the unit's user only. */
export function credentialsDir(component: string): string {
  return `/run/credentials/${unitOf(component)}`;
}
