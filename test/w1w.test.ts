// The wired 1-host workers lab (w1w), wired once for the checks that only read it: the real
// kube-bench's CIS scan (helpers/cis-suite.ts) and `hardwire audit` (helpers/audit-suite.ts). A
// workers lab keeps no snapshot (helpers/lab.ts says why), so sharing one wire saves a whole one.
import { afterAll, beforeAll } from 'vitest';
import { wiredTestLab, type WiredLab } from './helpers/lab.ts';
import type { Session } from '../core/transport/index.ts';
import { cisSuite } from './helpers/cis-suite.ts';
import { auditSuite } from './helpers/audit-suite.ts';

let lab: { w: WiredLab; host: string; s: Session } | undefined;

beforeAll(async () => {
  // A workers lab: the host is a worker too, so the node target (4.x) runs on it, and the audit reads a kubelet.
  const w = await wiredTestLab('w1w', 1, { workers: true });
  const host = w.lab.info.hosts[0]!.name;
  lab = { w, host, s: await w.lab.ssh(host) };
}, 1_200_000);

afterAll(async () => {
  await lab?.s.close().catch(() => undefined);
  await lab?.w.lab.down();
});

const get = () => {
  if (!lab) throw new Error('the w1w lab was not wired');
  return lab;
};
// The audit first: it checks that nothing on the host changed while it ran, best on a quiet cluster.
auditSuite(get);
cisSuite(get);
