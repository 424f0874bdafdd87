// The source citations of the API drills (3.C1-3.C3): every format string hardwire traces a
// captured line to must still be at the cited line of the pinned module source, and real lines
// captured from the lab must trace to the line that klog's own header names. Needs the module
// cache that the component build fills (~/.cache/hardwire/gomod), like flags.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EMITTERS, formatRegex, locate, moduleDir, traceLine, STAGING_VERSION } from '../drills/api/trace-source.ts';

// Captured on the lab (2026-12-01), verbatim from the kube-apiserver journal.
const C1 = 'W1201 03:29:50.865591     303 dispatcher.go:217] Failed calling webhook, failing closed cabundle.drill.hardwire.dev: failed calling webhook "cabundle.drill.hardwire.dev": failed to call webhook: Post "https://10.213.169.1:38069/validate?timeout=5s": tls: failed to verify certificate: x509: certificate signed by unknown authority (possibly because of "crypto/rsa: verification error" while trying to verify candidate authority certificate "hardwire-drill-ca-cabundle")';
const C2 = 'E1201 03:35:41.219403     303 status.go:71] "Unhandled Error" err="apiserver received an error that is not an metav1.Status: &errors.errorString{s:\\"conversion webhook for drills.hardwire.dev/v1, Kind=Thermo returned invalid object at index 0: invalid groupVersion (expected drills.hardwire.dev/v2, received garbage.invalid/v0)\\"}: conversion webhook for drills.hardwire.dev/v1, Kind=Thermo returned invalid object at index 0: invalid groupVersion (expected drills.hardwire.dev/v2, received garbage.invalid/v0)"';
const C2_WATCH = 'E1201 03:35:08.497225     303 watcher.go:575] failed to prepare current and previous objects: conversion webhook for drills.hardwire.dev/v1, Kind=Thermo failed: Post "https://10.213.169.1:37247/convert?timeout=30s": dial tcp 10.213.169.1:37247: connect: connection refused';

describe('API drill source citations (pinned v1.36.3 staging modules)', () => {
  it('every emitter is at its cited line, quoted as a Go string literal', () => {
    expect(STAGING_VERSION).toBe('v0.36.3');
    for (const e of EMITTERS) {
      const c = locate(e);
      const line = readFileSync(join(moduleDir(c.module), c.file), 'utf8').split('\n')[c.line - 1]!;
      expect(line, c.cite).toContain(JSON.stringify(e.format));
      expect(c.cite).toBe(`${e.module}@v0.36.3/${e.file}:${c.line}`);
    }
  });

  it('a Go format becomes a regexp for what it prints', () => {
    expect(formatRegex('failed calling webhook %q: %v').test('failed calling webhook "a.b": boom')).toBe(true);
    expect(formatRegex('failed calling webhook %q: %v').test('failed calling webhook a.b: boom')).toBe(false);
    expect(formatRegex('returned %d objects').test('returned 3 objects')).toBe(true);
    expect(formatRegex('returned %d objects').test('returned x objects')).toBe(false);
  });

  for (const [name, line, expected] of [
    ['3.C1 validating webhook, failing closed', C1, ['k8s.io/apiserver@v0.36.3/pkg/admission/plugin/webhook/validating/dispatcher.go:217', 'k8s.io/apiserver@v0.36.3/pkg/util/webhook/error.go:36']],
    ['3.C2 conversion error sent as 500', C2, ['k8s.io/apiserver@v0.36.3/pkg/endpoints/handlers/responsewriters/status.go:71', 'k8s.io/apiextensions-apiserver@v0.36.3/pkg/apiserver/conversion/webhook_converter.go:360']],
    ['3.C2 watch cannot convert an event', C2_WATCH, ['k8s.io/apiserver@v0.36.3/pkg/storage/etcd3/watcher.go:575', 'k8s.io/apiextensions-apiserver@v0.36.3/pkg/apiserver/conversion/webhook_converter.go:286']],
  ] as const) {
    it(`${name}: traced to the line klog's header names`, () => {
      const cites = traceLine(line).map((c) => c.cite);
      expect(cites).toEqual(expected);
      // klog prints the caller's file:line; the outermost citation must be that very line.
      const header = /^[IWE]\d{4} [\d:.]+\s+\d+ ([\w.]+:\d+)\]/.exec(line)![1]!;
      expect(cites[0]!.endsWith(`/${header}`), `${cites[0]} vs ${header}`).toBe(true);
    });
  }

  it('the 429 body traces to the APF filter', () => {
    expect(traceLine('Too many requests, please try again later.\n').map((c) => c.cite)).toEqual(['k8s.io/apiserver@v0.36.3/pkg/server/filters/priority-and-fairness.go:380']);
  });
});
