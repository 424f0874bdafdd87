// Builds a lab base rootfs ahead of a run, so the first `lab up` that needs it does not: the amd64
// one, or with --arm64 the arm64 one of `lab up --arm64-workers` (after registering the qemu-aarch64
// binfmt_misc handler its second stage runs under). Cached under ~/.cache/hardwire/lab; a no-op when
// present. Needs root and debootstrap (--arm64: qemu-user-static, binfmt-support).
// Usage: node scripts/lab-rootfs.ts [--arm64]
import { stderrLogger } from '../lib/log.ts';
import { ensureArm64Rootfs } from '../harness/lab/arm64-host.ts';
import { ensureBaseRootfs } from '../harness/lab/rootfs.ts';

const log = stderrLogger();
const t0 = Date.now();
const dir = process.argv.includes('--arm64')
  ? await ensureArm64Rootfs(log)
  : await ensureBaseRootfs(log);
process.stdout.write(`${dir} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
