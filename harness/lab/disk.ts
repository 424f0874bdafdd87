// The lab's disk precondition: its kubelets share this machine's filesystem.
import { existsSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { StepError } from '../../lib/errors.ts';

/** Free space below which a lab's kubelets start evicting Pods and collecting images mid-test. */
export const MIN_FREE_DISK = 0.2;

/**
 * A lab host's kubelet sees the machine's filesystem (containerd's root is bound from the lab dir)
 * and keeps its defaults: Pods are evicted below 15% free (k8s.io/kubernetes@v1.36.3/pkg/kubelet/
 * eviction/defaults_linux.go:26) and images collected above 85% use (apis/config/v1beta1/defaults.go:159).
 * Refuse before anything is made, rather than fail later as a missing Pod or image.
 */
export function checkLabDisk(dir: string, free = freeFraction(dir)): void {
  if (free < MIN_FREE_DISK) {
    throw new StepError(
      'lab-disk',
      `the filesystem of ${dir} has ${(free * 100).toFixed(0)}% free; lab kubelets evict Pods below 15% and collect images above 85% use: free disk until at least ${MIN_FREE_DISK * 100}% is free`,
    );
  }
}

/** Of the nearest existing directory at or above `dir`, which the lab's files will land on. */
export function freeFraction(dir: string): number {
  let d = dir;
  while (!existsSync(d) && dirname(d) !== d) d = dirname(d);
  const s = statfsSync(d);
  return s.bavail / s.blocks;
}
