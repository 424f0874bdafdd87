// What `hardwire audit` reports: per host, each Kubernetes process it found in /proc, every flag and
// config field that process runs with (mapped to where its source registers and reads it, or
// unknown), and the certificates its flags name.

import type { PlanDoc } from '../../core/upgrade/format.ts';
import type { HostReport } from '../cis/index.ts';
import type { StoredApiRow } from '../../core/upgrade/stored-apis.ts';

/** `read`: the map has a read site; `registered`: registered, no read found; `unknown`: the map lacks it; `unmapped`: no map for this binary at this version. */
export type FlagStatus = 'read' | 'registered' | 'unknown' | 'unmapped';

export interface AuditSite {
  /** module@version/file:line */
  ref: string;
  url: string;
}

export interface AuditFlag {
  name: string;
  value: string;
  status: FlagStatus;
  /** The one line that explains it best, as a rendered unit's comment gives it (core/flags/map.ts citationOf). */
  cite?: string;
  registeredAt?: AuditSite;
  /** The map's read sites, best first. */
  readAt: AuditSite[];
}

export interface AuditCert {
  /** The path as the process names it, and who names it: "kube-apiserver --tls-cert-file". */
  path: string;
  namedBy: string;
  subject: string;
  issuer: string;
  notAfter: string;
  daysLeft: number;
  sans: string[];
  isCa: boolean;
  /** The CA file (named by a process on the same host) whose key signed it, if one did. */
  signedBy?: string;
  problems: string[];
}

/** A flag or config field hardwire's model of the same component sets and this process does not. */
export interface AuditLack {
  kind: 'flag' | 'field';
  name: string;
  /** hardwire's value (for a field, its JSON), and hardwire's reason for setting it. */
  hardwire: string;
  why: string;
}

export interface AuditProcess {
  component: string;
  pid: number;
  argv: string[];
  /** v1.36.3, or v3.6.8 for etcd; undefined when it could not be read (see notes). */
  version?: string;
  versionSource: string;
  /** The committed flag map used, e.g. core/flags/data/v1.36.3/kube-apiserver.json; undefined: none. */
  map?: string;
  flags: AuditFlag[];
  config?: { path: string; source: string; fields: AuditFlag[] };
  /** What hardwire's model sets that this process does not (audit.ts fills it from the inventory). */
  lacks?: AuditLack[];
  notes: string[];
}

export interface AuditHost {
  name: string;
  address: string;
  reachable: boolean;
  processes: AuditProcess[];
  /** Every certificate the processes name, once per path, checked against the CA files they name. */
  certs: AuditCert[];
  notes: string[];
  /** --cis: kube-bench's results on this host, with the stock profile, for the targets its processes make. */
  cis?: HostReport;
}

export interface AuditReport {
  generatedAt: string;
  hosts: AuditHost[];
  /** One line each for what could not be read; non-empty means the report is partial (exit 1). */
  partial: string[];
  /** --upgrade-to: upgrade plan's document for the flags and fields read here. */
  upgrade?: PlanDoc;
  /** --upgrade-to: the objects stored in APIs the target stops serving (apis.ts). */
  apis?: AuditApis;
  /** --cis: the kube-bench that ran, and its benchmark. */
  kubeBench?: { version: string; benchmark: string };
}

/** Each kind the target stops serving, listed at its version through a kube-controller-manager's kubeconfig. */
export interface AuditApis {
  to: string;
  /** The apiserver's own /version, and its URL as the kubeconfig names it. */
  from: string;
  server: string;
  /** The host, process and kubeconfig the listing went through. */
  via: string;
  rows: StoredApiRow[];
}
