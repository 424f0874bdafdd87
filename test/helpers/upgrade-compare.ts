// For compare --upgrade-to on the lab (test/compare.test.ts): the flag v1.37.2 removes, put into the
// lab's inventory before it is wired, and kubeadm's plan read on the kubeadm host by the test itself.
import { readFileSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import type { Session } from '../../core/transport/index.ts';
import type { KubeadmPlanDoc } from '../../harness/planes/upgrade-types.ts';

/** kube-controller-manager's --concurrent-service-syncs: registered at v1.36.3, gone at v1.37.2 (README's flag table). */
export const REMOVED = {
  component: 'kube-controller-manager',
  flag: 'concurrent-service-syncs',
  value: '2',
} as const;

/** Adds REMOVED to the inventory's cluster.extraArgs, in place. */
export function passRemovedFlag(inventory: string): void {
  const doc = parse(readFileSync(inventory, 'utf8')) as {
    cluster: { extraArgs?: Record<string, Record<string, string>> };
  };
  doc.cluster.extraArgs = {
    ...doc.cluster.extraArgs,
    [REMOVED.component]: { [REMOVED.flag]: REMOVED.value },
  };
  writeFileSync(inventory, stringify(doc));
}

/** kubeadm v1.37.2 on the host, run by the test: its version, and its plan as text and as JSON. */
export async function kubeadmPlanOnHost(
  s: Session,
  to: string,
): Promise<{ version: string; text: string; doc: KubeadmPlanDoc }> {
  const bin = `/usr/bin/kubeadm-${to}`;
  const run = async (argv: string[]) => {
    const r = await s.exec(argv, { allowFail: true, timeoutMs: 300_000 });
    if (r.code !== 0)
      throw new Error(`${argv.join(' ')} exited ${r.code}: ${r.stderr.slice(-500)}`);
    return r;
  };
  const version = (await run([bin, 'version', '-o', 'short'])).stdout.trim();
  const text = await run([bin, 'upgrade', 'plan', to]);
  const json = await run([bin, 'upgrade', 'plan', to, '-o', 'json']);
  return {
    version,
    text: `${text.stdout}${text.stderr}`,
    doc: JSON.parse(json.stdout) as KubeadmPlanDoc,
  };
}
