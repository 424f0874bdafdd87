// The drills' source citations (runner drills and API drills 3.C1-3.C3, one catalog): every
// catalogued message re-opened at its cited line in the pinned module source, as flags verify does,
// and real lines captured on the lab traced to the line that klog's own header names. Needs the
// module cache that the component build fills (~/.cache/hardwire/gomod) and /usr/local/go/src, like
// flags.test.ts, so it is not in the unit set.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  MESSAGES,
  STAGING_VERSION,
  citation,
  formatRegex,
  sourcePath,
  traceLine,
  verifyMessages,
  type Message,
} from '../harness/drills/trace.ts';

// Captured on the lab (2026-12-01), verbatim from the kube-apiserver journal.
const AUTHN =
  'E1201 03:40:11.123456     412 authentication.go:75] "Unable to authenticate the request" err="[verifying certificate SN=1, SKID=, AKID=AB failed: x509: certificate signed by unknown authority]"';
const LEASE =
  'E1201 03:30:54.098012     321 leaderelection.go:461] "Error retrieving lease lock" err="Get \\"https://127.0.0.1:6443/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler?timeout=5s\\": tls: failed to verify certificate: x509: certificate is valid for 10.96.0.1, 10.213.168.11, 10.213.168.12, not 127.0.0.1" lock="kube-system/kube-scheduler"';
const C1 =
  'W1201 03:29:50.865591     303 dispatcher.go:217] Failed calling webhook, failing closed cabundle.drill.hardwire.dev: failed calling webhook "cabundle.drill.hardwire.dev": failed to call webhook: Post "https://10.213.169.1:38069/validate?timeout=5s": tls: failed to verify certificate: x509: certificate signed by unknown authority (possibly because of "crypto/rsa: verification error" while trying to verify candidate authority certificate "hardwire-drill-ca-cabundle")';
const C2 =
  'E1201 03:35:41.219403     303 status.go:71] "Unhandled Error" err="apiserver received an error that is not an metav1.Status: &errors.errorString{s:\\"conversion webhook for drills.hardwire.dev/v1, Kind=Thermo returned invalid object at index 0: invalid groupVersion (expected drills.hardwire.dev/v2, received garbage.invalid/v0)\\"}: conversion webhook for drills.hardwire.dev/v1, Kind=Thermo returned invalid object at index 0: invalid groupVersion (expected drills.hardwire.dev/v2, received garbage.invalid/v0)"';
const C2_WATCH =
  'E1201 03:35:08.497225     303 watcher.go:575] failed to prepare current and previous objects: conversion webhook for drills.hardwire.dev/v1, Kind=Thermo failed: Post "https://10.213.169.1:37247/convert?timeout=30s": dial tcp 10.213.169.1:37247: connect: connection refused';

const byId = (id: string): Message => MESSAGES.find((m) => m.id === id)!;

describe('drills/trace.ts: the catalog against the pinned source', () => {
  it('every cited line holds its format string (re-read here, not only by verifyMessages)', () => {
    expect(STAGING_VERSION).toBe('v0.36.3');
    const r = verifyMessages();
    expect(r.failures).toEqual([]);
    expect(r.checked).toBe(MESSAGES.length);
    for (const m of MESSAGES) {
      const line = readFileSync(sourcePath(m.site), 'utf8').split('\n')[m.site.line - 1]!;
      expect(line, m.id).toContain(m.format);
      expect(citation(m.site)).toBe(
        `${m.site.module}@${m.site.version}/${m.site.file}:${m.site.line}`,
      );
    }
  });

  it('a citation one line off, or at another version, fails', () => {
    const off: Message[] = MESSAGES.map((m) => ({
      ...m,
      site: { ...m.site, line: m.site.line + 1 },
    }));
    expect(verifyMessages(off).failures).toHaveLength(MESSAGES.length);
    const moved = verifyMessages([
      {
        ...byId('webhook-failing-closed'),
        site: { ...byId('webhook-failing-closed').site, line: 216 },
      },
    ]).failures;
    expect(moved[0]!.reason).toMatch(/does not contain .* \(in this file at: 217\)/);
    const v: Message[] = [
      { ...MESSAGES[0]!, site: { ...MESSAGES[0]!.site, version: 'v0.0.0-nope' } },
    ];
    expect(verifyMessages(v).failures[0]!.reason).toMatch(/file or line not found/);
  });

  it('a format on another line of the file must be catalogued or listed in sameFormatAt', () => {
    const kcm = byId('kcm-controller-client-failed');
    expect(
      verifyMessages([{ ...kcm, sameFormatAt: undefined }]).failures.map((f) => f.reason),
    ).toEqual([expect.stringMatching(/also at line 543/)]);
    expect(
      verifyMessages([{ ...kcm, sameFormatAt: [543, 600] }]).failures.map((f) => f.reason),
    ).toEqual([expect.stringMatching(/sameFormatAt 600 no longer holds/)]);
    // Both leader-election call sites are catalogued, so neither needs the other listed.
    expect(
      verifyMessages(MESSAGES.filter((m) => m.id === 'leaderelection-lease-get-failed')).failures,
    ).toEqual([]);
    expect(
      verifyMessages(MESSAGES.filter((m) => m.id === 'leaderelection-lease-get-failed').slice(0, 1))
        .failures,
    ).toHaveLength(1);
  });
});

describe('drills/trace.ts: traceLine', () => {
  it('a Go format becomes a regexp for what it prints', () => {
    expect(
      formatRegex('failed calling webhook %q: %v').test('failed calling webhook "a.b": boom'),
    ).toBe(true);
    expect(
      formatRegex('failed calling webhook %q: %v').test('failed calling webhook a.b: boom'),
    ).toBe(false);
    expect(formatRegex('returned %d objects').test('returned 3 objects')).toBe(true);
    expect(formatRegex('returned %d objects').test('returned x objects')).toBe(false);
    expect(formatRegex('a (b) %#+v.').test('a (b) &x{}.')).toBe(true);
  });

  it("traces a real apiserver line to the log call and each error it wraps, and checks klog's header", () => {
    const t = traceLine(AUTHN);
    expect(t.map((x) => x.id)).toEqual([
      'apiserver-authn-failed',
      'apiserver-x509-verify-failed',
      'x509-unknown-authority',
    ]);
    expect(t[0]!.citation).toBe(
      'k8s.io/apiserver@v0.36.3/pkg/endpoints/filters/authentication.go:75',
    );
    expect(t[0]!.klogHeaderAgrees).toBe(true);
    expect(t[1]!.klogHeaderAgrees).toBeUndefined();
    expect(t[2]!.citation).toBe('std@go1.26.8/crypto/x509/verify.go:157');
    expect(
      traceLine(AUTHN.replace('authentication.go:75]', 'authentication.go:80]'))[0]!
        .klogHeaderAgrees,
    ).toBe(false);
    expect(traceLine('nothing catalogued here')).toEqual([]);
  });

  it('a message logged from two call sites is traced to the one klog names', () => {
    expect(traceLine(LEASE).map((t) => t.citation)).toEqual([
      'k8s.io/client-go@v0.36.3/tools/leaderelection/leaderelection.go:461',
      'std@go1.26.8/crypto/x509/verify.go:142',
    ]);
    expect(
      traceLine(LEASE.replace('leaderelection.go:461]', 'leaderelection.go:366]'))[0]!.citation,
    ).toMatch(/leaderelection\.go:366$/);
  });

  for (const [name, line, expected] of [
    [
      '3.C1 validating webhook, failing closed',
      C1,
      [
        'k8s.io/apiserver@v0.36.3/pkg/admission/plugin/webhook/validating/dispatcher.go:217',
        'k8s.io/apiserver@v0.36.3/pkg/util/webhook/error.go:36',
        'std@go1.26.8/crypto/x509/verify.go:157',
      ],
    ],
    [
      '3.C2 conversion error sent as 500',
      C2,
      [
        'k8s.io/apiserver@v0.36.3/pkg/endpoints/handlers/responsewriters/status.go:71',
        'k8s.io/apiextensions-apiserver@v0.36.3/pkg/apiserver/conversion/webhook_converter.go:360',
      ],
    ],
    [
      '3.C2 watch cannot convert an event',
      C2_WATCH,
      [
        'k8s.io/apiserver@v0.36.3/pkg/storage/etcd3/watcher.go:575',
        'k8s.io/apiextensions-apiserver@v0.36.3/pkg/apiserver/conversion/webhook_converter.go:286',
        'std@go1.26.8/syscall/zerrors_linux_amd64.go:1466',
      ],
    ],
  ] as const) {
    it(`${name}: traced to the line klog's header names`, () => {
      const t = traceLine(line);
      expect(t.map((c) => c.citation)).toEqual(expected);
      // klog prints the caller's file:line; the outermost citation must be that very line.
      const header = /^[IWE]\d{4} [\d:.]+\s+\d+ ([\w.]+:\d+)\]/.exec(line)![1]!;
      expect(t[0]!.citation.endsWith(`/${header}`), `${t[0]!.citation} vs ${header}`).toBe(true);
      expect(t[0]!.kind).toBe('log');
      expect(t[0]!.klogHeaderAgrees).toBe(true);
      expect(t[0]!.what).toBeTruthy();
    });
  }

  it('the 429 body traces to the APF filter', () => {
    expect(
      traceLine('Too many requests, please try again later.\n').map((c) => c.citation),
    ).toEqual(['k8s.io/apiserver@v0.36.3/pkg/server/filters/priority-and-fairness.go:380']);
  });

  it("a caller's catalog in the same format is used instead of MESSAGES", () => {
    const mine: Message[] = [{ ...byId('apf-rejected'), id: 'mine' }];
    expect(traceLine(C1, mine)).toEqual([]);
    expect(traceLine('Too many requests, please try again later.', mine).map((t) => t.id)).toEqual([
      'mine',
    ]);
  });
});
