// Each log line a drill captures, traced to the source line that emits it: the log call and the
// errors wrapped inside it, as `module@version/file:line` in the pinned module source (the Go module
// cache, and the Go toolchain's own src for the standard library, e.g. crypto/x509's messages).
// One catalog for every drill (the runner's cert and outage drills, the webhook and APF drills).
// The catalog is data, like the flag map: `verifyMessages` re-opens every cited line and checks it
// still holds the format string, so a citation moved by one line fails test/trace.test.ts; tracing
// itself reads no source, so a drill runs without the module cache.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeModule } from '../flags/index.ts';
import { goEnv } from '../flags/index.ts';
import { PINNED_KUBERNETES } from '../../lib/constants.ts';

/** The Go standard library's pseudo-module: its source is $GOROOT/src, its version $GOROOT/VERSION. */
export const STD = 'std';
export const GO_VERSION = 'go1.26.8';
/** The staging modules (client-go, apiserver, ...) are v0.<minor>.<patch> for Kubernetes v1.<minor>.<patch>. */
export const STAGING_VERSION = PINNED_KUBERNETES.replace(/^v1\./, 'v0.');
const K8S = STAGING_VERSION;

export interface SourceSite {
  module: string;
  version: string;
  file: string;
  line: number;
}

export interface Message {
  id: string;
  /** Recognises the message inside a captured journal line. */
  match: RegExp;
  /** The literal the cited source line must contain: the format string, or the log call's message. */
  format: string;
  /** A log call (klog's header then names the same file:line), or a string carried inside one or
   *  sent to a client (an error it wraps, a response body). */
  kind: 'log' | 'error';
  site: SourceSite;
  /** What happened, for the report, where the format alone does not say. */
  what?: string;
  /** Other lines of the same file holding the same format, not catalogued: why they are not the source is said where they are listed. */
  sameFormatAt?: number[];
}

const site = (module: string, version: string, file: string, line: number): SourceSite => ({
  module,
  version,
  file,
  line,
});
/** An entry written as a Go format string: the source line holds it quoted, the log line what it prints. */
const printed = (format: string) => ({
  format: JSON.stringify(format),
  match: formatRegex(format),
});
/** A structured klog message: the quoted text is both what the source line holds and what the log line shows. */
const logged = (msg: string) => ({
  format: JSON.stringify(msg),
  match: formatRegex(JSON.stringify(msg)),
});
const CLIENT_GO = 'k8s.io/client-go';
const APISERVER = 'k8s.io/apiserver';
const APIEXT = 'k8s.io/apiextensions-apiserver';
const KUBERNETES = 'k8s.io/kubernetes';
const CONVERTER = 'pkg/apiserver/conversion/webhook_converter.go';

/** Outer (the log call) before inner (the errors it wraps), so a trace reads like the line. */
export const MESSAGES: Message[] = [
  // Log calls.
  {
    id: 'apiserver-authn-failed',
    kind: 'log',
    ...logged('Unable to authenticate the request'),
    site: site(APISERVER, K8S, 'pkg/endpoints/filters/authentication.go', 75),
  },
  {
    id: 'leaderelection-get-failed',
    kind: 'log',
    ...logged('error retrieving resource lock'),
    site: site(CLIENT_GO, K8S, 'tools/leaderelection/leaderelection.go', 323),
  },
  {
    id: 'leaderelection-renew-failed',
    kind: 'log',
    ...logged('Failed to renew lease'),
    site: site(CLIENT_GO, K8S, 'tools/leaderelection/leaderelection.go', 304),
  },
  // Two call sites log it (acquire and renew); klog's header tells which, and traceLine keeps that one.
  {
    id: 'leaderelection-lease-get-failed',
    kind: 'log',
    ...logged('Error retrieving lease lock'),
    site: site(CLIENT_GO, K8S, 'tools/leaderelection/leaderelection.go', 366),
  },
  {
    id: 'leaderelection-lease-get-failed',
    kind: 'log',
    ...logged('Error retrieving lease lock'),
    site: site(CLIENT_GO, K8S, 'tools/leaderelection/leaderelection.go', 461),
  },
  {
    id: 'leaderelection-lease-update-failed',
    kind: 'log',
    ...logged('Failed to update lease'),
    site: site(CLIENT_GO, K8S, 'tools/leaderelection/leaderelection.go', 497),
  },
  {
    id: 'leaderelection-update-failed',
    kind: 'log',
    ...logged('Failed to update lock'),
    site: site(CLIENT_GO, K8S, 'tools/leaderelection/leaderelection.go', 421),
  },
  {
    id: 'kcm-leaderelection-lost',
    kind: 'log',
    ...logged('leaderelection lost/stopped'),
    site: site(
      KUBERNETES,
      PINNED_KUBERNETES,
      'cmd/kube-controller-manager/app/controllermanager.go',
      413,
    ),
  },
  {
    id: 'scheduler-leaderelection-lost',
    kind: 'log',
    ...logged('Leaderelection lost'),
    site: site(KUBERNETES, PINNED_KUBERNETES, 'cmd/kube-scheduler/app/server.go', 328),
  },
  {
    id: 'kcm-controller-init-failed',
    kind: 'log',
    ...logged('Error initializing a controller'),
    site: site(
      KUBERNETES,
      PINNED_KUBERNETES,
      'cmd/kube-controller-manager/app/controllermanager.go',
      637,
    ),
  },
  {
    id: 'reflector-watch-backoff',
    kind: 'log',
    ...logged('Watch failed - backing off'),
    site: site(CLIENT_GO, K8S, 'tools/cache/reflector.go', 608),
  },
  {
    id: 'reflector-watch-failed',
    kind: 'log',
    ...logged('Failed to watch'),
    site: site(CLIENT_GO, K8S, 'tools/cache/reflector.go', 227),
  },
  {
    id: 'webhook-failing-closed',
    kind: 'log',
    ...printed('Failed calling webhook, failing closed %v: %v'),
    site: site(APISERVER, K8S, 'pkg/admission/plugin/webhook/validating/dispatcher.go', 217),
    what: 'the validating dispatcher logs a failed call under failurePolicy Fail',
  },
  // runtime.HandleError logs with its caller's file:line.
  {
    id: 'apiserver-non-status-error',
    kind: 'log',
    ...printed('apiserver received an error that is not an metav1.Status: %#+v: %v'),
    site: site(APISERVER, K8S, 'pkg/endpoints/handlers/responsewriters/status.go', 71),
    what: 'a non-Status error reached the response writer (logged, sent as 500)',
  },
  {
    id: 'watch-prepare-objects-failed',
    kind: 'log',
    ...printed('failed to prepare current and previous objects: %v'),
    site: site(APISERVER, K8S, 'pkg/storage/etcd3/watcher.go', 575),
    what: 'the watch from etcd cannot decode an event into the version it serves (here: the conversion fails)',
  },
  // Errors wrapped into them.
  {
    id: 'kcm-controller-client-failed',
    kind: 'error',
    match: /failed to create Kubernetes client for /,
    format: '"failed to create Kubernetes client for %q: %w"',
    site: site(
      KUBERNETES,
      PINNED_KUBERNETES,
      'cmd/kube-controller-manager/app/controllermanager.go',
      522,
    ),
    // 543 is only the "shared-informers" client, built before any controller; the drills' lines name a controller (NewClient).
    sameFormatAt: [543],
  },
  {
    id: 'reflector-list-failed',
    kind: 'error',
    match: /failed to list \S+: /,
    format: '"failed to list %v: %w"',
    site: site(CLIENT_GO, K8S, 'tools/cache/reflector.go', 747),
  },
  {
    id: 'apiserver-x509-verify-failed',
    kind: 'error',
    match: /verifying certificate .* failed: /,
    format: '"verifying certificate %s failed: %w"',
    site: site(APISERVER, K8S, 'pkg/authentication/request/x509/x509.go', 188),
  },
  {
    id: 'forbidden',
    kind: 'error',
    match: /\S+ \\?"[^"\\]+\\?" is forbidden: /,
    format: '"%s %q is forbidden: %v"',
    site: site('k8s.io/apimachinery', K8S, 'pkg/api/errors/errors.go', 216),
  },
  {
    id: 'rbac-user-cannot',
    kind: 'error',
    match:
      /User \\?"[^"\\]+\\?" cannot \S+ resource \\?"[^"\\]+\\?" in API group \\?"[^"\\]*\\?" in the namespace/,
    format: '"User %q cannot %s resource %q in API group %q in the namespace %q"',
    site: site(APISERVER, K8S, 'pkg/endpoints/handlers/responsewriters/errors.go', 76),
  },
  {
    id: 'webhook-call-failed',
    kind: 'error',
    ...printed('failed calling webhook %q: %v'),
    site: site(APISERVER, K8S, 'pkg/util/webhook/error.go', 36),
    what: 'the error that names the webhook (also returned to the client)',
  },
  // 293 wraps a malformed response; the call itself failing (a refused or timed-out Post) is 286.
  {
    id: 'conversion-webhook-failed',
    kind: 'error',
    ...printed('conversion webhook for %v failed: %v'),
    site: site(APIEXT, K8S, CONVERTER, 286),
    sameFormatAt: [293],
    what: 'the conversion webhook call failed',
  },
  {
    id: 'conversion-invalid-converted-gv',
    kind: 'error',
    ...printed(
      'conversion webhook for %v returned invalid converted object at index %v: invalid groupVersion (expected %v, received %v)',
    ),
    site: site(APIEXT, K8S, CONVERTER, 320),
    what: 'the converter rejects a converted object of the wrong group/version',
  },
  {
    id: 'conversion-invalid-object-gv',
    kind: 'error',
    ...printed(
      'conversion webhook for %v returned invalid object at index 0: invalid groupVersion (expected %v, received %v)',
    ),
    site: site(APIEXT, K8S, CONVERTER, 360),
    what: 'the converter rejects a converted single object of the wrong group/version',
  },
  {
    id: 'apf-rejected',
    kind: 'error',
    ...printed('Too many requests, please try again later.'),
    site: site(APISERVER, K8S, 'pkg/server/filters/priority-and-fairness.go', 380),
    what: 'the APF filter rejects a request (429 body)',
  },
  {
    id: 'x509-hostname',
    kind: 'error',
    match: /x509: certificate is valid for .+, not \S+/,
    format: '"x509: certificate is valid for " + valid.String() + ", not " + h.Host',
    site: site(STD, GO_VERSION, 'crypto/x509/verify.go', 142),
  },
  {
    id: 'x509-unknown-authority',
    kind: 'error',
    match: /x509: certificate signed by unknown authority/,
    format: '"x509: certificate signed by unknown authority"',
    site: site(STD, GO_VERSION, 'crypto/x509/verify.go', 157),
  },
  {
    id: 'x509-expired',
    kind: 'error',
    match: /x509: certificate has expired or is not yet valid/,
    format: '"x509: certificate has expired or is not yet valid: "',
    site: site(STD, GO_VERSION, 'crypto/x509/verify.go', 77),
  },
  {
    id: 'connection-refused',
    kind: 'error',
    match: /connect: connection refused/,
    format: '111: "connection refused"',
    site: site(STD, GO_VERSION, 'syscall/zerrors_linux_amd64.go', 1466),
  },
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

export interface Trace {
  id: string;
  kind: Message['kind'];
  citation: string;
  site: SourceSite;
  format: string;
  what?: string;
  klogHeaderAgrees?: boolean;
}

/** klog's header names the log call's file:line (`E1201 03:04:05.678 12 reflector.go:227] ...`). */
function klogSite(line: string): string | undefined {
  return /^[IWEF]\d{4} [\d:.]+\s+\d+ ([\w.-]+\.go:\d+)\]/.exec(line)?.[1];
}

/** Every catalogued message in the line, in catalog order: the log call first. */
export function traceLine(line: string, catalog: readonly Message[] = MESSAGES): Trace[] {
  const header = klogSite(line);
  const all: Trace[] = catalog
    .filter((m) => m.match.test(line))
    .map((m) => ({
      id: m.id,
      kind: m.kind,
      citation: citation(m.site),
      site: m.site,
      format: m.format,
      ...(m.what ? { what: m.what } : {}),
      ...(m.kind === 'log' && header
        ? { klogHeaderAgrees: header === `${m.site.file.split('/').pop()}:${m.site.line}` }
        : {}),
    }));
  // A message logged from several call sites: keep the one klog's header names, if it names one.
  return all.filter(
    (t) =>
      t.klogHeaderAgrees !== false ||
      !all.some((o) => o !== t && o.id === t.id && o.klogHeaderAgrees === true),
  );
}

/** A regexp for what a Go format string prints: %d a number, %q a quoted string, any other verb anything. */
export function formatRegex(format: string): RegExp {
  let re = '';
  for (let i = 0; i < format.length; i++) {
    const verb = /^%[#+]*[a-zA-Z]/.exec(format.slice(i))?.[0];
    if (verb) {
      const v = verb.at(-1);
      re += v === 'd' ? '-?\\d+' : v === 'q' ? '"(?:[^"\\\\]|\\\\.)*"' : '.*?';
      i += verb.length - 1;
    } else re += format[i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(re);
}

export interface MessageFailure {
  id: string;
  citation: string;
  reason: string;
}

/**
 * Re-opens every cited line; the line must contain the format string (as `flags verify` does for
 * flags). Every other line of the file holding it must be cited too or listed in `sameFormatAt`, so
 * a new call site with the same message is not silently traced to the old one.
 */
export function verifyMessages(catalog: readonly Message[] = MESSAGES): {
  checked: number;
  failures: MessageFailure[];
} {
  const failures: MessageFailure[] = [];
  const files = new Map<string, string[] | null>();
  const stdVersion = existsSync(join(goroot(), 'VERSION'))
    ? readFileSync(join(goroot(), 'VERSION'), 'utf8').split('\n')[0]
    : undefined;
  for (const m of catalog) {
    const where = citation(m.site);
    const fail = (reason: string) => failures.push({ id: m.id, citation: where, reason });
    if (m.site.module === STD && stdVersion !== m.site.version) {
      fail(`the Go toolchain at ${goroot()} is ${stdVersion ?? 'missing'}, not ${m.site.version}`);
      continue;
    }
    const path = sourcePath(m.site);
    if (!files.has(path))
      files.set(path, existsSync(path) ? readFileSync(path, 'utf8').split('\n') : null);
    const lines = files.get(path);
    const line = lines?.[m.site.line - 1];
    if (!lines || line === undefined) {
      fail(`${path}: file or line not found`);
      continue;
    }
    const holding = lines.flatMap((l, i) => (l.includes(m.format) ? [i + 1] : []));
    if (!line.includes(m.format)) {
      fail(
        `the line does not contain ${m.format} (in this file at: ${holding.join(', ') || 'none'}): ${line.trim()}`,
      );
      continue;
    }
    const known = new Set([
      ...catalog
        .filter((o) => o.format === m.format && sourcePath(o.site) === path)
        .map((o) => o.site.line),
      ...(m.sameFormatAt ?? []),
    ]);
    const unknown = holding.filter((n) => !known.has(n));
    if (unknown.length)
      fail(
        `${m.format} is also at line ${unknown.join(', ')}: catalogue it or list it in sameFormatAt`,
      );
    const stale = (m.sameFormatAt ?? []).filter((n) => !holding.includes(n));
    if (stale.length) fail(`sameFormatAt ${stale.join(', ')} no longer holds ${m.format}`);
  }
  return { checked: catalog.length, failures };
}

/** Lines of a source file holding a text: to find the line when adding a catalog entry, or a doc line to cite. */
export function findFormat(
  s: Pick<SourceSite, 'module' | 'version' | 'file'>,
  format: string,
): number[] {
  const path = sourcePath(s);
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .flatMap((l, i) => (l.includes(format) ? [i + 1] : []));
}
