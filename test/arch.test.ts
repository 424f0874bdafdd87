// Each host's architecture, without a host: what an ELF header says (checked against `file`), the
// cache keeping another architecture's binaries apart, and the version probe refusing a binary of
// the wrong architecture before it runs one under qemu-user. (test/vm.test.ts plans a real arm64 host.)
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { FILE_SAYS, elfArch, localArch } from '../lib/arch.ts';
import { binaryPath } from '../core/components/binaries/cache.ts';
import { probeVersion } from '../core/components/binaries/verify.ts';
import { busyboxFor } from '../core/components/image-build.ts';
import { StepError } from '../lib/errors.ts';

const file = (p: string) => execFileSync('file', ['-bL', p], { encoding: 'utf8' });

describe('architectures', () => {
  it("reads an ELF's architecture as `file` does", () => {
    expect(localArch()).toBe('amd64');
    const arm = busyboxFor('arm64');
    expect(elfArch('/bin/ls')).toBe('amd64');
    expect(file('/bin/ls')).toContain(FILE_SAYS.amd64);
    expect(elfArch(arm)).toBe('arm64');
    expect(file(arm)).toContain(FILE_SAYS.arm64);
    expect(elfArch('/etc/os-release')).toBeUndefined();
  });

  it("keeps another architecture's binaries apart from this machine's", () => {
    expect(binaryPath('kubelet', 'v1.36.3', 'amd64')).toBe(binaryPath('kubelet', 'v1.36.3'));
    expect(binaryPath('kubelet', 'v1.36.3', 'arm64')).toMatch(
      /\/bin\/linux-arm64\/kubelet\/v1\.36\.3\/kubelet$/,
    );
  });

  it('probes an arm64 binary under qemu-user, and refuses one of the wrong architecture first', async () => {
    // busybox answers no version flag hardwire knows; kube-proxy's probe runs `--version`.
    await expect(probeVersion('kube-proxy', 'v1.36.3', '/bin/ls', 'arm64')).rejects.toThrow(
      /\/bin\/ls is an x86-64 ELF, not ARM aarch64 \(arm64\)/,
    );
    await expect(
      probeVersion('kube-proxy', 'v1.36.3', busyboxFor('arm64'), 'arm64'),
    ).rejects.toBeInstanceOf(StepError);
    const arm = binaryPath('kube-proxy', 'v1.36.3', 'arm64');
    expect(file(arm)).toContain(FILE_SAYS.arm64);
    expect(await probeVersion('kube-proxy', 'v1.36.3', arm, 'arm64')).toMatch(
      /^Kubernetes v1\.36\.3/,
    );
  });
});
