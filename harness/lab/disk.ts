// The lab's disk precondition: its kubelets share this machine's filesystem.
import { existsSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { StepError } from '../../lib/errors.ts';

/** Free space below which a lab's kubelets evict Pods and collect images (see checkLabDisk). */
export const EVICTION_FREE = 0.15;
/** Kept above EVICTION_FREE once the lab is made: what its hosts write later (images, logs, etcd). */
export const MARGIN = 0.01;
/** What one wired lab host takes: 0.6 to 1.3 GiB measured (its root filesystem, binaries and images). */
export const LAB_HOST_BYTES = 1024 ** 3;

const GiB = (b: number) => (b / 1024 ** 3).toFixed(1);

/**
 * A lab host's kubelet sees the machine's filesystem (containerd's root is bound from the lab dir)
 * and keeps its defaults: Pods are evicted below 15% free (k8s.io/kubernetes@v1.36.3/pkg/kubelet/
 * eviction/defaults_linux.go:26) and images collected above 85% use (apis/config/v1beta1/defaults.go:159).
 * Refuse before anything is made, when what the lab is about to take (`need` bytes) would leave
 * less than that plus a margin, rather than fail later as a missing Pod or image.
 */
export function checkLabDisk(dir: string, need: number, s: Statfs = statOf(dir)): void {
  const total = s.blocks * s.bsize;
  const free = s.bavail * s.bsize;
  const floor = (EVICTION_FREE + MARGIN) * total;
  if (free - need < floor) {
    throw new StepError(
      'lab-disk',
      `the filesystem of ${dir} has ${GiB(free)} GiB free (${((free / total) * 100).toFixed(1)}%); this lab needs about ${GiB(need)} GiB, and lab kubelets evict Pods below ${EVICTION_FREE * 100}% free: free at least ${GiB(floor + need - free)} GiB`,
    );
  }
}

type Statfs = { bavail: number; blocks: number; bsize: number };

/** statfs of the nearest existing directory at or above `dir`, which the lab's files will land on. */
export function statOf(dir: string): Statfs {
  let d = dir;
  while (!existsSync(d) && dirname(d) !== d) d = dirname(d);
  return statfsSync(d);
}
