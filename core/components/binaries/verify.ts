// Runs a binary's own version command and checks that it names the expected version.
import { StepError } from '../../../lib/errors.ts';
import { VERSION_PROBES } from './catalog.ts';
import { type BinaryName } from '../registry/index.ts';
import { run, tail } from '../../../lib/proc.ts';
import { FILE_SAYS, elfArch, localArch, type Arch } from '../../../lib/arch.ts';

/** qemu-user, which runs another architecture's binary here (scripts/setup.sh installs qemu-user-static). */
const QEMU_USER: Readonly<Record<Arch, string>> = {
  amd64: 'qemu-x86_64-static',
  arm64: 'qemu-aarch64-static',
};

/**
 * Returns the version output (first lines); throws StepError if the binary is not an ELF of `arch`,
 * does not run, or lies. Another architecture's binary runs under qemu-user.
 */
export async function probeVersion(
  name: BinaryName,
  version: string,
  path: string,
  arch: Arch = localArch(),
): Promise<string> {
  // This machine's binary proves itself by running; another architecture's by its ELF header first.
  const got = arch === localArch() ? arch : elfArch(path);
  if (got !== arch)
    throw new StepError(
      `verify ${name}`,
      `${path} is ${got ? `an ${FILE_SAYS[got]} ELF` : 'not a 64-bit ELF hardwire builds'}, not ${FILE_SAYS[arch]} (${arch})`,
    );
  const probe = VERSION_PROBES[name];
  const want = probe.expect(version);
  // Fails with the command, its exit status and the last output lines when it does not run or exits non-zero.
  const [cmd, args]: [string, readonly string[]] =
    'via' in probe && probe.via === 'go-version-m'
      ? ['go', ['version', '-m', path]]
      : arch === localArch()
        ? [path, probe.args]
        : [QEMU_USER[arch], [path, ...probe.args]];
  const res = await run(cmd, args, {
    step: `verify ${name}`,
    timeoutMs: 30_000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' },
    tailOf: 'all',
  });
  const out = `${res.stdout}\n${res.stderr}`;
  // A binary that prints its own argv[0] first (distribution's registry): the path is taken off.
  const lines = out
    .split('\n')
    .map((l) => l.trim())
    .map((l) =>
      'argv0' in probe && probe.argv0 && l.startsWith(`${path} `) ? l.slice(path.length + 1) : l,
    );
  if (!lines.some((l) => l === want || l.startsWith(`${want} `) || l.startsWith(`${want}\t`))) {
    throw new StepError(
      `verify ${name}`,
      `${path} does not report ${version}: expected a line "${want}"`,
      { detail: tail(out, 6) },
    );
  }
  return lines
    .filter((l) => l !== '')
    .slice(0, 4)
    .join('\n');
}
