// The drills' source citations: every catalogued message re-opened at its cited line in the pinned
// module source (Go module cache, and the Go toolchain's src for crypto/x509), as flags verify does.
import { describe, expect, it } from 'vitest';
import { MESSAGES, findFormat, traceLine, verifyMessages, type Message } from '../drills/trace.ts';

describe('drills/trace.ts', () => {
  it('every cited line holds its format string', () => {
    const r = verifyMessages();
    expect(r.failures).toEqual([]);
    expect(r.checked).toBe(MESSAGES.length);
    for (const m of MESSAGES) expect(findFormat(m.site, m.format), m.id).toContain(m.site.line);
  });

  it('a citation one line off, or at another version, fails', () => {
    const off: Message[] = MESSAGES.map((m) => ({ ...m, site: { ...m.site, line: m.site.line + 1 } }));
    expect(verifyMessages(off).failures).toHaveLength(MESSAGES.length);
    const v: Message[] = [{ ...MESSAGES[0]!, site: { ...MESSAGES[0]!.site, version: 'v0.0.0-nope' } }];
    expect(verifyMessages(v).failures[0]!.reason).toMatch(/file or line not found/);
  });

  it('traces a real apiserver line to the log call and each error it wraps, and checks klog\'s header', () => {
    const line = 'E1201 03:40:11.123456     412 authentication.go:75] "Unable to authenticate the request" err="[verifying certificate SN=1, SKID=, AKID=AB failed: x509: certificate signed by unknown authority]"';
    const t = traceLine(line);
    expect(t.map((x) => x.id)).toEqual(['apiserver-authn-failed', 'apiserver-x509-verify-failed', 'x509-unknown-authority']);
    expect(t[0]!.citation).toBe('k8s.io/apiserver@v0.36.3/pkg/endpoints/filters/authentication.go:75');
    expect(t[0]!.klogHeaderAgrees).toBe(true);
    expect(t[2]!.citation).toBe('std@go1.26.8/crypto/x509/verify.go:157');
    expect(traceLine(line.replace('authentication.go:75]', 'authentication.go:80]'))[0]!.klogHeaderAgrees).toBe(false);
    expect(traceLine('nothing catalogued here')).toEqual([]);
  });

  it('a message logged from two call sites is traced to the one klog names', () => {
    const line = 'E1201 03:30:54.098012     321 leaderelection.go:461] "Error retrieving lease lock" err="Get \\"https://127.0.0.1:6443/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler?timeout=5s\\": tls: failed to verify certificate: x509: certificate is valid for 10.96.0.1, 10.213.168.11, 10.213.168.12, not 127.0.0.1" lock="kube-system/kube-scheduler"';
    expect(traceLine(line).map((t) => t.citation)).toEqual([
      'k8s.io/client-go@v0.36.3/tools/leaderelection/leaderelection.go:461',
      'std@go1.26.8/crypto/x509/verify.go:142',
    ]);
  });
});
