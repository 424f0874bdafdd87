// Each log line a drill captures, traced to the source line that emits it: the log call and the
// errors wrapped inside it, as `module@version/file:line` in the pinned module source (the Go module
// cache, and the Go toolchain's own src for the standard library, e.g. crypto/x509's messages).
// The catalog is data, like the flag map: `verifyMessages` re-opens every cited line and checks it
// still holds the format string. Other drills (webhooks, APF) pass their own catalogs to the same
// functions, or append to MESSAGES.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeModule } from '../flags/verify.ts';
import { goEnv } from '../flags/regenerate.ts';

/** The Go standard library's pseudo-module: its source is $GOROOT/src, its version $GOROOT/VERSION. */
export const STD = 'std';
export const GO_VERSION = 'go1.26.8';
const K8S = 'v0.36.3';

export interface SourceSite { module: string; version: string; file: string; line: number }

export interface Message {
  id: string;
  /** Recognises the message inside a captured journal line. */
  match: RegExp;
  /** The literal the cited source line must contain: the format string, or the log call's message. */
  format: string;
  /** A log call (klog's header then names the same file:line) or an error string wrapped into one. */
  kind: 'log' | 'error';
  site: SourceSite;
}

const site = (module: string, version: string, file: string, line: number): SourceSite => ({ module, version, file, line });
const CLIENT_GO = 'k8s.io/client-go';
const APISERVER = 'k8s.io/apiserver';

/** Outer (the log call) before inner (the errors it wraps), so a trace reads like the line. */
export const MESSAGES: Message[] = [
  // Log calls.
  { id: 'apiserver-authn-failed', kind: 'log', match: /"Unable to authenticate the request"/, format: '"Unable to authenticate the request"', site: site(APISERVER, K8S, 'pkg/endpoints/filters/authentication.go', 75) },
  { id: 'leaderelection-get-failed', kind: 'log', match: /"error retrieving resource lock"/, format: '"error retrieving resource lock"', site: site(CLIENT_GO, K8S, 'tools/leaderelection/leaderelection.go', 323) },
  { id: 'leaderelection-renew-failed', kind: 'log', match: /"Failed to renew lease"/, format: '"Failed to renew lease"', site: site(CLIENT_GO, K8S, 'tools/leaderelection/leaderelection.go', 304) },
  // Two call sites log it (acquire and renew); klog's header tells which, and traceLine keeps that one.
  { id: 'leaderelection-lease-get-failed', kind: 'log', match: /"Error retrieving lease lock"/, format: '"Error retrieving lease lock"', site: site(CLIENT_GO, K8S, 'tools/leaderelection/leaderelection.go', 366) },
  { id: 'leaderelection-lease-get-failed', kind: 'log', match: /"Error retrieving lease lock"/, format: '"Error retrieving lease lock"', site: site(CLIENT_GO, K8S, 'tools/leaderelection/leaderelection.go', 461) },
  { id: 'leaderelection-lease-update-failed', kind: 'log', match: /"Failed to update lease"/, format: '"Failed to update lease"', site: site(CLIENT_GO, K8S, 'tools/leaderelection/leaderelection.go', 497) },
  { id: 'leaderelection-update-failed', kind: 'log', match: /"Failed to update lock"/, format: '"Failed to update lock"', site: site(CLIENT_GO, K8S, 'tools/leaderelection/leaderelection.go', 421) },
  { id: 'kcm-leaderelection-lost', kind: 'log', match: /"leaderelection lost\/stopped"/, format: '"leaderelection lost/stopped"', site: site('k8s.io/kubernetes', 'v1.36.3', 'cmd/kube-controller-manager/app/controllermanager.go', 413) },
  { id: 'scheduler-leaderelection-lost', kind: 'log', match: /"Leaderelection lost"/, format: '"Leaderelection lost"', site: site('k8s.io/kubernetes', 'v1.36.3', 'cmd/kube-scheduler/app/server.go', 328) },
  { id: 'kcm-controller-init-failed', kind: 'log', match: /"Error initializing a controller"/, format: '"Error initializing a controller"', site: site('k8s.io/kubernetes', 'v1.36.3', 'cmd/kube-controller-manager/app/controllermanager.go', 637) },
  { id: 'reflector-watch-backoff', kind: 'log', match: /"Watch failed - backing off"/, format: '"Watch failed - backing off"', site: site(CLIENT_GO, K8S, 'tools/cache/reflector.go', 608) },
  { id: 'reflector-watch-failed', kind: 'log', match: /"Failed to watch"/, format: '"Failed to watch"', site: site(CLIENT_GO, K8S, 'tools/cache/reflector.go', 227) },
  // Errors wrapped into them.
  { id: 'kcm-controller-client-failed', kind: 'error', match: /failed to create Kubernetes client for /, format: '"failed to create Kubernetes client for %q: %w"', site: site('k8s.io/kubernetes', 'v1.36.3', 'cmd/kube-controller-manager/app/controllermanager.go', 522) },
  { id: 'reflector-list-failed', kind: 'error', match: /failed to list \S+: /, format: '"failed to list %v: %w"', site: site(CLIENT_GO, K8S, 'tools/cache/reflector.go', 747) },
  { id: 'apiserver-x509-verify-failed', kind: 'error', match: /verifying certificate .* failed: /, format: '"verifying certificate %s failed: %w"', site: site(APISERVER, K8S, 'pkg/authentication/request/x509/x509.go', 188) },
  { id: 'forbidden', kind: 'error', match: /\S+ \\?"[^"\\]+\\?" is forbidden: /, format: '"%s %q is forbidden: %v"', site: site('k8s.io/apimachinery', K8S, 'pkg/api/errors/errors.go', 216) },
  { id: 'rbac-user-cannot', kind: 'error', match: /User \\?"[^"\\]+\\?" cannot \S+ resource \\?"[^"\\]+\\?" in API group \\?"[^"\\]*\\?" in the namespace/, format: '"User %q cannot %s resource %q in API group %q in the namespace %q"', site: site(APISERVER, K8S, 'pkg/endpoints/handlers/responsewriters/errors.go', 76) },
  { id: 'x509-hostname', kind: 'error', match: /x509: certificate is valid for .+, not \S+/, format: '"x509: certificate is valid for " + valid.String() + ", not " + h.Host', site: site(STD, GO_VERSION, 'crypto/x509/verify.go', 142) },
  { id: 'x509-unknown-authority', kind: 'error', match: /x509: certificate signed by unknown authority/, format: '"x509: certificate signed by unknown authority"', site: site(STD, GO_VERSION, 'crypto/x509/verify.go', 157) },
  { id: 'x509-expired', kind: 'error', match: /x509: certificate has expired or is not yet valid/, format: '"x509: certificate has expired or is not yet valid: "', site: site(STD, GO_VERSION, 'crypto/x509/verify.go', 77) },
  { id: 'connection-refused', kind: 'error', match: /connect: connection refused/, format: '111: "connection refused"', site: site(STD, GO_VERSION, 'syscall/zerrors_linux_amd64.go', 1466) },
];

export function citation(s: SourceSite): string {
  return `${s.module}@${s.version}/${s.file}:${s.line}`;
}

function goroot(): string {
  return process.env.GOROOT ?? '/usr/local/go';
}

/** Where a module's source is on this machine. */
export function sourcePath(s: Pick<SourceSite, 'module' | 'version' | 'file'>): string {
  if (s.module === STD) return join(goroot(), 'src', s.file);
  return join(goEnv().GOMODCACHE ?? '', `${escapeModule(s.module)}@${s.version}`, s.file);
}

export interface Trace { id: string; kind: Message['kind']; citation: string; format: string; klogHeaderAgrees?: boolean }

/** klog's header names the log call's file:line (`E1201 03:04:05.678 12 reflector.go:227] ...`). */
function klogSite(line: string): string | undefined {
  return /^[IWEF]\d{4} [\d:.]+\s+\d+ ([\w.-]+\.go:\d+)\]/.exec(line)?.[1];
}

/** Every catalogued message in the line, the log call first. */
export function traceLine(line: string, catalog: readonly Message[] = MESSAGES): Trace[] {
  const header = klogSite(line);
  const all: Trace[] = catalog.filter((m) => m.match.test(line)).map((m) => ({
    id: m.id, kind: m.kind, citation: citation(m.site), format: m.format,
    ...(m.kind === 'log' && header ? { klogHeaderAgrees: header === `${m.site.file.split('/').pop()}:${m.site.line}` } : {}),
  }));
  // A message logged from several call sites: keep the one klog's header names, if it names one.
  return all.filter((t) => t.klogHeaderAgrees !== false || !all.some((o) => o !== t && o.id === t.id && o.klogHeaderAgrees === true));
}

export interface MessageFailure { id: string; citation: string; reason: string }

/** Re-opens every cited line; the line must contain the format string (as `flags verify` does for flags). */
export function verifyMessages(catalog: readonly Message[] = MESSAGES): { checked: number; failures: MessageFailure[] } {
  const failures: MessageFailure[] = [];
  const files = new Map<string, string[] | null>();
  const stdVersion = existsSync(join(goroot(), 'VERSION')) ? readFileSync(join(goroot(), 'VERSION'), 'utf8').split('\n')[0] : undefined;
  for (const m of catalog) {
    const where = citation(m.site);
    if (m.site.module === STD && stdVersion !== m.site.version) {
      failures.push({ id: m.id, citation: where, reason: `the Go toolchain at ${goroot()} is ${stdVersion ?? 'missing'}, not ${m.site.version}` });
      continue;
    }
    const path = sourcePath(m.site);
    if (!files.has(path)) files.set(path, existsSync(path) ? readFileSync(path, 'utf8').split('\n') : null);
    const line = files.get(path)?.[m.site.line - 1];
    if (line === undefined) failures.push({ id: m.id, citation: where, reason: `${path}: file or line not found` });
    else if (!line.includes(m.format)) failures.push({ id: m.id, citation: where, reason: `the line does not contain ${m.format}: ${line.trim()}` });
  }
  return { checked: catalog.length, failures };
}

/** Lines of a source file holding a format string: to find the line when adding a catalog entry. */
export function findFormat(s: Pick<SourceSite, 'module' | 'version' | 'file'>, format: string): number[] {
  const path = sourcePath(s);
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').flatMap((l, i) => (l.includes(format) ? [i + 1] : []));
}
