// Runs a binary's own version command and checks that it names the expected version.
import { StepError } from '../../lib/errors.ts';
import { VERSION_PROBES, type ComponentName } from './catalog.ts';
import { run, tail } from './proc.ts';

/** Returns the version output (first lines); throws StepError if the binary does not run or lies. */
export async function probeVersion(name: ComponentName, version: string, path: string): Promise<string> {
  const probe = VERSION_PROBES[name];
  const want = probe.expect(version);
  let res;
  try {
    res = await run(path, probe.args, { timeoutMs: 30_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' } });
  } catch (err) {
    throw new StepError(`verify ${name}`, `${path} does not run: ${(err as Error).message}`, { cause: err });
  }
  const out = `${res.stdout}\n${res.stderr}`;
  if (res.code !== 0) {
    throw new StepError(`verify ${name}`, `"${name} ${probe.args.join(' ')}" exited ${res.code ?? res.signal}`, { detail: tail(out) });
  }
  const lines = out.split('\n').map((l) => l.trim());
  if (!lines.some((l) => l === want || l.startsWith(`${want} `) || l.startsWith(`${want}\t`))) {
    throw new StepError(`verify ${name}`, `${path} does not report ${version}: expected a line "${want}"`, { detail: tail(out, 6) });
  }
  return lines.filter((l) => l !== '').slice(0, 4).join('\n');
}
