// The command list. Each module is imported only when its command runs, so that `hardwire pki`
// does not import ssh2 or the lab; the full list is loaded only for `hardwire --help`.
import type { Cli, CommandModule } from './command.ts';

const modules: Record<string, () => Promise<CommandModule>> = {
  pki: () => import('./commands/pki.ts'),
  render: () => import('./commands/render.ts'),
  preflight: () => import('./commands/preflight.ts'),
  wire: () => import('./commands/wire.ts'),
  verify: () => import('./commands/verify.ts'),
  teardown: () => import('./commands/teardown.ts'),
  kubeconfig: () => import('./commands/kubeconfig.ts'),
  images: () => import('./commands/images.ts'),
  rollback: () => import('./commands/rollback.ts'),
  etcd: () => import('./commands/etcd.ts'),
  components: () => import('./commands/components.ts'),
  lab: () => import('./commands/lab.ts'),
  certs: () => import('./commands/certs.ts'),
  drill: () => import('./commands/drill.ts'),
  compare: () => import('./commands/compare.ts'),
  cis: () => import('./commands/cis.ts'),
  flags: () => import('./commands/flags.ts'),
  upgrade: () => import('./commands/upgrade.ts'),
  trace: () => import('./commands/trace.ts'),
  audit: () => import('./commands/audit.ts'),
  encryption: () => import('./commands/encryption.ts'),
  learn: () => import('./commands/learn.ts'),
};

/** Declares one command on root, loading only its own module; undefined for an unknown name. */
export async function declareCommand(root: Cli, name: string): Promise<Cli | undefined> {
  const load = Object.hasOwn(modules, name) ? modules[name] : undefined;
  return load ? (await load()).declare(root) : undefined;
}

/** Declares every command on root, in the order above (for the --help listing). */
export async function declareAll(root: Cli): Promise<Cli[]> {
  const loaded = await Promise.all(Object.values(modules).map((load) => load()));
  return loaded.map((m) => m.declare(root));
}
