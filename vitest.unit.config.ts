import { defineConfig } from 'vitest/config';

// `pnpm test:unit`: the tests that need no lab, no root and no Go build, for quick iteration.
// They are pure or use only local tools (openssl, sh, ssh-keygen), so files run in parallel.
// Not here: tests that read the Go module cache (flags, trace), which the component build fills.
// The exceptions are coredns-addon and upgrade-gates/-path/-stored-apis: they re-open a few cited files there, and name the path if one is missing;
// upgrade-path, prove-html and compare-html also open their HTML in the machine's Chromium.
// `pnpm test` runs these and everything else.
export const UNIT_TESTS = [
  'test/plan.test.ts',
  'test/compare-ttfp.test.ts',
  'test/compare-proc-tree.test.ts',
  'test/lab-disk.test.ts',
  'test/render.test.ts',
  'test/systemd-escape.test.ts',
  'test/workers-render.test.ts',
  'test/pki.test.ts',
  'test/pki-security.test.ts',
  'test/inventory.test.ts',
  'test/log.test.ts',
  'test/transport.test.ts',
  'test/proc.test.ts',
  'test/registry.test.ts',
  'test/sources.test.ts',
  'test/k0s-fates.test.ts',
  'test/lab-ssh.test.ts',
  'test/drill-help.test.ts',
  'test/proc-modes.test.ts',
  'test/systemctl.test.ts',
  'test/lock.test.ts',
  'test/lanes.test.ts',
  'test/retry.test.ts',
  'test/lab-worker-plan.test.ts',
  'test/upgrade.test.ts',
  'test/upgrade-fields.test.ts',
  'test/upgrade-new.test.ts',
  'test/upgrade-etcd.test.ts',
  'test/upgrade-etcd-hops.test.ts',
  'test/upgrade-gates.test.ts',
  'test/upgrade-path.test.ts',
  'test/prove-html.test.ts',
  'test/upgrade-steps.test.ts',
  'test/upgrade-stored-apis.test.ts',
  'test/upgrade-refuse.test.ts',
  'test/coredns-addon.test.ts',
  'test/kubeadm-config.test.ts',
  'test/trace-stages.test.ts',
  'test/trace-webhook.test.ts',
  'test/compare-html.test.ts',
  'test/compare-node.test.ts',
  'test/cis-redact.test.ts',
  'test/prove-sites.test.ts',
  'test/prove-foreign.test.ts',
  'test/prove-shutdown.test.ts',
  'test/prove-source.test.ts',
  'test/prove-classify.test.ts',
  'test/prove-decide.test.ts',
  'test/prove-guards.test.ts',
  'test/prove-first-boot.test.ts',
  'test/kubelet-certs.test.ts',
  'test/k0s-worker-config.test.ts',
  'test/compare-upgrade.test.ts',
  'test/flags-config-defaults.test.ts',
  'test/proven-planes.test.ts',
  'test/readme.test.ts',
];

export default defineConfig({
  test: {
    include: UNIT_TESTS,
    testTimeout: 60_000,
    reporters: ['default'],
  },
});
