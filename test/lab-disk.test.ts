// The lab refuses to start on a filesystem its kubelets would evict Pods on: the fraction is the
// one df reports, and the refusal is one line naming the fix.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { MIN_FREE_DISK, checkLabDisk, freeFraction } from '../harness/lab/disk.ts';

describe('lab disk check', () => {
  it('reads the free fraction df reports, from the nearest existing directory', () => {
    const [avail, size] = execFileSync('df', ['--output=avail,size', '-B1', '/tmp'], {
      encoding: 'utf8',
    })
      .trim()
      .split('\n')[1]!
      .trim()
      .split(/\s+/)
      .map(Number);
    expect(freeFraction('/tmp/hardwire-no-such-lab/a/b')).toBeCloseTo(avail! / size!, 2);
  });

  it('refuses below the bound with one line naming the fix, and passes above it', () => {
    expect(() => checkLabDisk('/tmp/x', MIN_FREE_DISK - 0.05)).toThrow(
      /^the filesystem of \/tmp\/x has 15% free; .*free disk until at least 20% is free$/,
    );
    expect(() => checkLabDisk('/tmp/x', MIN_FREE_DISK + 0.01)).not.toThrow();
  });
});
