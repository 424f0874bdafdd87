// The lab files in lanes that run side by side (scripts/test-lanes.ts), one vitest process each and
// one file at a time within a lane. A lab test waits on real daemons far more than it computes (drill
// and upgrade bodies keep this 2-core machine about 30% busy), so lanes overlap the waits.
// Rules (test/lanes.test.ts checks them): every lab file is in exactly one lane; files that share a
// wired lab (wiredTestLab's name: w1, w2, ...) are in one lane, since they restore its snapshot in turn;
// every lab name in the suite has a /24 of its own. Lanes are balanced by the per-file profile
// (`pnpm bench suite` prints each lane's wall; docs/measurements.md); a new lab file goes to the lane
// with the least time.
export const LAB_LANES: readonly (readonly string[])[] = [
  [
    // w1 (flags prove and the API drills), w3w (the upgrade), the faults
    'test/drill-api.test.ts',
    'test/flags-prove.test.ts',
    'test/flags-prove-k0s.test.ts',
    'test/flags-prove-kubeadm.test.ts',
    'test/lab-snapshot.test.ts',
    'test/security-live.test.ts',
    'test/upgrade-apply.test.ts',
    'test/faults.test.ts',
    // vmw: a container and a QEMU VM worker (issue 43)
    'test/vm.test.ts',
  ],
  [
    // w2 (the certificate drills), compare's three planes, wire from nothing, kubeadm for real, the guide's cluster, k0s killed
    'test/drill.test.ts',
    'test/drill-mistakes.test.ts',
    'test/certs.test.ts',
    'test/compare.test.ts',
    'test/wire.test.ts',
    'test/k0s-worker.test.ts',
    'test/proxyjump.test.ts',
    'test/flags-proven.test.ts',
    'test/worker-citations.test.ts',
    'test/kube-vip-citations.test.ts',
    'test/registry-citations.test.ts',
    'test/kubeadm-real.test.ts',
    'test/guide-audit.test.ts',
    'test/drill-kill-k0s.test.ts',
  ],
  [
    // w3, w1w, ha3 (losing a host: about 17 min), the flag maps, the builds, the lab itself
    'test/etcd-snapshot.test.ts',
    'test/encryption-rotate.test.ts',
    'test/lose-host.test.ts',
    'test/flags-prove-multi.test.ts',
    'test/w1w.test.ts',
    'test/webhook-pod.test.ts',
    'test/addons-wire.test.ts',
    'test/flags.test.ts',
    'test/workers-wire.test.ts',
    'test/components.test.ts',
    'test/sans.test.ts',
    'test/become.test.ts',
    'test/upgrade-live.test.ts',
    'test/workers-binaries.test.ts',
    'test/flags-help.test.ts',
    'test/prove-entries.test.ts',
    'test/lab.test.ts',
    'test/lab-offline.test.ts',
    'test/trace.test.ts',
    'test/etcd-on-demand.test.ts',
    // hwtest-learn: the task list as a learner types it, learn's --check and --demo (issue 44)
    'test/learn.test.ts',
    'test/kubernetes-on-demand.test.ts',
  ],
];
