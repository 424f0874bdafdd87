// Traces a captured log line to the Go source line that emits it: the message is matched against
// known format strings, and each matching format is found, quoted, in the pinned module source
// (~/.cache/hardwire/gomod, where the component build put it). The result cites
// module@version/file:line; test/drill-api-trace.test.ts re-opens every cited line.
// Kept apart from drills/trace.ts (being written for 3.C4/cert drills) so the two merge as one table.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from '../../lib/paths.ts';
import { PINNED_KUBERNETES } from '../../lib/constants.ts';

export interface Emitter { module: string; file: string; format: string; what: string }
export interface Citation { cite: string; module: string; version: string; file: string; line: number; format: string; what: string }

/** The staging modules are versioned v0.<minor>.<patch> for Kubernetes v1.<minor>.<patch>. */
export const STAGING_VERSION = PINNED_KUBERNETES.replace(/^v1\./, 'v0.');

const APISERVER = 'k8s.io/apiserver';
const APIEXT = 'k8s.io/apiextensions-apiserver';

/** Formats the API drills capture, outermost (the logging call) first. */
export const EMITTERS: readonly Emitter[] = [
  { module: APISERVER, file: 'pkg/admission/plugin/webhook/validating/dispatcher.go', format: 'Failed calling webhook, failing closed %v: %v', what: 'the validating dispatcher logs a failed call under failurePolicy Fail' },
  { module: APISERVER, file: 'pkg/util/webhook/error.go', format: 'failed calling webhook %q: %v', what: 'the error that names the webhook (also returned to the client)' },
  { module: APISERVER, file: 'pkg/endpoints/handlers/responsewriters/status.go', format: 'apiserver received an error that is not an metav1.Status: %#+v: %v', what: 'a non-Status error reached the response writer (logged, sent as 500)' },
  { module: APISERVER, file: 'pkg/storage/etcd3/watcher.go', format: 'failed to prepare current and previous objects: %v', what: 'the watch from etcd cannot decode an event into the version it serves (here: the conversion fails)' },
  { module: APIEXT, file: 'pkg/apiserver/conversion/webhook_converter.go', format: 'conversion webhook for %v failed: %v', what: 'the conversion webhook call or its response failed' },
  { module: APIEXT, file: 'pkg/apiserver/conversion/webhook_converter.go', format: 'conversion webhook for %v returned invalid converted object at index %v: invalid groupVersion (expected %v, received %v)', what: 'the converter rejects a converted object of the wrong group/version' },
  { module: APIEXT, file: 'pkg/apiserver/conversion/webhook_converter.go', format: 'conversion webhook for %v returned invalid object at index 0: invalid groupVersion (expected %v, received %v)', what: 'the converter rejects a converted single object of the wrong group/version' },
  { module: APISERVER, file: 'pkg/server/filters/priority-and-fairness.go', format: 'Too many requests, please try again later.', what: 'the APF filter rejects a request (429)' },
];

export function moduleDir(module: string, version = STAGING_VERSION, modcache = join(cacheDir(), 'gomod')): string {
  // The module cache escapes upper case as !lower; these module paths have none.
  return join(modcache, `${module}@${version}`);
}

/** A regexp for what a Go format string prints. */
export function formatRegex(format: string): RegExp {
  let re = '';
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c === '%') {
      const m = /^%[#+]*[a-zA-Z]/.exec(format.slice(i));
      if (m) {
        const verb = m[0].at(-1);
        re += verb === 'd' ? '-?\\d+' : verb === 'q' ? '"(?:[^"\\\\]|\\\\.)*"' : '.*?';
        i += m[0].length - 1;
        continue;
      }
    }
    re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(re);
}

/** Where `e.format` is written, quoted, in the module source: file and 1-based line. */
export function locate(e: Emitter, modcache?: string): Citation {
  const dir = moduleDir(e.module, STAGING_VERSION, modcache);
  const path = join(dir, e.file);
  if (!existsSync(path)) throw new Error(`${e.module}@${STAGING_VERSION}/${e.file} is not in the module cache; run "hardwire components build" (it downloads the modules)`);
  const quoted = JSON.stringify(e.format);
  const lines = readFileSync(path, 'utf8').split('\n');
  const idx = lines.findIndex((l) => l.includes(quoted));
  if (idx < 0) throw new Error(`${e.module}@${STAGING_VERSION}/${e.file} has no ${quoted}`);
  return { cite: `${e.module}@${STAGING_VERSION}/${e.file}:${idx + 1}`, module: e.module, version: STAGING_VERSION, file: e.file, line: idx + 1, format: e.format, what: e.what };
}

/** Every known format that the line holds, located in the source. */
export function traceLine(line: string, modcache?: string): Citation[] {
  return EMITTERS.filter((e) => formatRegex(e.format).test(line)).map((e) => locate(e, modcache));
}
