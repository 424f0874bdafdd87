// The CPU architectures hardwire builds for: each host's is read (uname -m) by preflight, and
// every binary and image it is given is built for it (GOARCH; a cross C compiler for pause and runc).
import { closeSync, openSync, readSync } from 'node:fs';

export const ARCHES = ['amd64', 'arm64'] as const;
export type Arch = (typeof ARCHES)[number];

/** `uname -m` to GOARCH. */
export const UNAME_ARCH: Readonly<Record<string, Arch>> = { x86_64: 'amd64', aarch64: 'arm64' };

/** ELF e_machine (elf.h EM_X86_64, EM_AARCH64), and what `file` prints for it. */
const ELF_MACHINE: Readonly<Record<Arch, number>> = { amd64: 62, arm64: 183 };
export const FILE_SAYS: Readonly<Record<Arch, string>> = { amd64: 'x86-64', arm64: 'ARM aarch64' };

/** Debian's multiarch triplet: the cross C compiler's prefix and the library directory. */
export const TRIPLET: Readonly<Record<Arch, string>> = {
  amd64: 'x86_64-linux-gnu',
  arm64: 'aarch64-linux-gnu',
};

/** The machine hardwire runs on, as GOARCH. */
export function localArch(): Arch {
  const a = ({ x64: 'amd64', arm64: 'arm64' } as Record<string, Arch>)[process.arch];
  if (!a) throw new Error(`hardwire runs on amd64 or arm64, not ${process.arch}`);
  return a;
}

/** The architecture an ELF file was built for, from its header; undefined when it is not a 64-bit little-endian ELF of one of ARCHES. */
export function elfArch(path: string): Arch | undefined {
  const fd = openSync(path, 'r');
  const h = Buffer.alloc(20);
  try {
    readSync(fd, h, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  // \x7fELF, ELFCLASS64, ELFDATA2LSB; e_machine is the half-word at offset 18.
  if (h.readUInt32BE(0) !== 0x7f454c46 || h[4] !== 2 || h[5] !== 1) return undefined;
  const m = h.readUInt16LE(18);
  return ARCHES.find((a) => ELF_MACHINE[a] === m);
}
