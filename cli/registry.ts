// The command list. Loaded lazily so that `hardwire pki` does not import ssh2 or the lab.
import type { Command } from './command.ts';

const modules: Record<string, () => Promise<{ command: Command }>> = {
  pki: () => import('./commands/pki.ts'),
  render: () => import('./commands/render.ts'),
  wire: () => import('./commands/wire.ts'),
  verify: () => import('./commands/verify.ts'),
  teardown: () => import('./commands/teardown.ts'),
  kubeconfig: () => import('./commands/kubeconfig.ts'),
  rollback: () => import('./commands/rollback.ts'),
  etcd: () => import('./commands/etcd.ts'),
  components: () => import('./commands/components.ts'),
  lab: () => import('./commands/lab.ts'),
  certs: () => import('./commands/certs.ts'),
  drill: () => import('./commands/drill.ts'),
  compare: () => import('./commands/compare.ts'),
  flags: () => import('./commands/flags.ts'),
};

/** One command, loading only its own module. */
export async function command(name: string): Promise<Command | undefined> {
  const load = Object.hasOwn(modules, name) ? modules[name] : undefined;
  return load ? (await load()).command : undefined;
}

/** Every command, for the --help listing. */
export async function commands(): Promise<Command[]> {
  const loaded = await Promise.all(Object.values(modules).map((load) => load()));
  return loaded.map((m) => m.command);
}
