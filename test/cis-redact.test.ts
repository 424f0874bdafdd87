// kube-bench's audit output carries what the audit printed: check 4.3.1 runs `cat $proxykubeconfig`,
// and a worker's kube-proxy kubeconfig embeds its client key. hardwire's CIS report (and compare's,
// which includes it) keeps the audit output without the key.
import { describe, expect, it } from 'vitest';
import { summarize, type RawReport } from '../harness/cis/report.ts';

const KUBECONFIG = [
  'apiVersion: v1',
  'clusters:',
  '- cluster:',
  '    certificate-authority-data: LS0tQ0E=',
  '    server: https://10.0.0.2:6443',
  '  name: c',
  'users:',
  '- name: system:kube-proxy',
  '  user:',
  '    client-certificate-data: LS0tQ0VSVA==',
  '    client-key-data: LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t',
  '    token: abc.def',
].join('\n');
const PEM = '-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIC0x\n-----END EC PRIVATE KEY-----';

describe("kube-bench audit output in hardwire's CIS report", () => {
  it('keeps what the audit printed but no embedded key, token or PEM private key', () => {
    const raw: RawReport = {
      Controls: [
        {
          id: '4',
          version: 'cis-1.12',
          text: 'Worker Node',
          node_type: 'node',
          total_pass: 1,
          total_fail: 0,
          total_warn: 0,
          total_info: 0,
          tests: [
            {
              section: '4.3',
              desc: 'kube-proxy',
              results: [
                {
                  test_number: '4.3.1',
                  test_desc: 'metrics on localhost',
                  status: 'PASS',
                  scored: true,
                  actual_value: `${KUBECONFIG}\n${PEM}`,
                  reason: PEM,
                },
              ],
            },
          ],
        },
      ],
      Totals: { total_pass: 1, total_fail: 0, total_warn: 0, total_info: 0 },
    };
    const c = summarize(raw, {
      host: 'node1',
      roles: [],
      targets: [],
      skipped: undefined,
      seconds: 1,
    }).checks[0]!;
    expect(c.actual).toContain('server: https://10.0.0.2:6443');
    expect(c.actual).toContain('client-certificate-data: LS0tQ0VSVA==');
    expect(c.actual).not.toMatch(
      /client-key-data|PRIVATE KEY|LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t|abc\.def|MHcCAQEEIC0x/,
    );
    expect(c.reason).not.toMatch(/PRIVATE KEY|MHcCAQEEIC0x/);
  });
});
