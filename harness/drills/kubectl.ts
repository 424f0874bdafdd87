// The user-visible symptom, reproduced with the real kubectl (the pinned build in the binary cache)
// as a user would type it. A host's own kubeconfig (the broken one) is copied to a private temp
// file for the call and removed; its key never reaches a log or a report.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../lib/proc.ts';
import { kubectlPath } from '../../core/components/binaries/cache.ts';
import type { ReadSession } from '../../core/transport/index.ts';

export interface KubectlResult {
  command: string;
  code: number;
  output: string;
}

export { kubectlPath };

/** Runs kubectl; `shown` is the kubeconfig as the report names it (never a temp path). */
export async function kubectl(
  kubeconfig: string,
  args: string[],
  shown = kubeconfig,
): Promise<KubectlResult> {
  const r = await run(
    kubectlPath(),
    ['--kubeconfig', kubeconfig, '--request-timeout=5s', ...args],
    { step: 'kubectl', allowFail: true, timeoutMs: 30_000 },
  );
  const output = [r.stdout.trim(), r.stderr.trim()].filter(Boolean).join('\n');
  return { command: ['kubectl', '--kubeconfig', shown, ...args].join(' '), code: r.code, output };
}

/** kubectl with a kubeconfig read from a host (e.g. the broken controller-manager.conf), from here. */
export async function kubectlWithHostKubeconfig(
  s: ReadSession,
  host: string,
  path: string,
  args: string[],
): Promise<KubectlResult> {
  const dir = mkdtempSync(join(tmpdir(), 'hardwire-drill-'));
  try {
    const file = join(dir, 'kubeconfig');
    writeFileSync(file, await s.readFile(path), { mode: 0o600 });
    return await kubectl(file, args, `${host}:${path}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
