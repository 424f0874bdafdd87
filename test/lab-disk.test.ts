// The lab refuses to start when what it is about to take would leave its kubelets' filesystem near
// their eviction threshold: the bytes are the ones df reports, and the refusal is one line naming the fix.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { EVICTION_FREE, MARGIN, checkLabDisk, statOf } from '../harness/lab/disk.ts';

const GIB = 1024 ** 3;
/** A 100 GiB filesystem with `free` GiB available, in 4 KiB blocks. */
const fs = (free: number) => ({
  bsize: 4096,
  blocks: (100 * GIB) / 4096,
  bavail: (free * GIB) / 4096,
});

describe('lab disk check', () => {
  it('reads what df reports, from the nearest existing directory', () => {
    const [avail, size] = execFileSync('df', ['--output=avail,size', '-B1', '/tmp'], {
      encoding: 'utf8',
    })
      .trim()
      .split('\n')[1]!
      .trim()
      .split(/\s+/)
      .map(Number);
    const s = statOf('/tmp/hardwire-no-such-lab/a/b');
    expect((s.bavail * s.bsize) / avail!).toBeCloseTo(1, 2);
    expect((s.blocks * s.bsize) / size!).toBeCloseTo(1, 2);
  });

  it('refuses when the lab would leave less than the eviction threshold and its margin, with one line naming the fix', () => {
    const floor = (EVICTION_FREE + MARGIN) * 100;
    expect(floor).toBe(16);
    // 20 GiB free, 3 hosts' 3 GiB: 17 GiB left, above 16.
    expect(() => checkLabDisk('/tmp/x', 3 * GIB, fs(20))).not.toThrow();
    // 18 GiB free: 15 left, under 16.
    expect(() => checkLabDisk('/tmp/x', 3 * GIB, fs(18))).toThrow(
      /^the filesystem of \/tmp\/x has 18\.0 GiB free \(18\.0%\); this lab needs about 3\.0 GiB, and lab kubelets evict Pods below 15% free: free at least 1\.0 GiB$/,
    );
    // Nothing to add (an existing lab): only the floor counts.
    expect(() => checkLabDisk('/tmp/x', 0, fs(16.5))).not.toThrow();
    expect(() => checkLabDisk('/tmp/x', 0, fs(15.5))).toThrow(/free at least 0\.5 GiB$/);
  });
});
