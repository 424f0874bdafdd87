// `flags prove --flags-of kubeadm`: the flags kubeadm passes to a component, translated onto
// hardwire's host, in place of the unit's. What the report keeps: the tool's command, and per flag
// its original value, the value run and how (or why it was not run).
import type { Host, Inventory } from '../../../core/inventory/load.ts';
import type { Session } from '../../../core/transport/index.ts';
import type { Logger } from '../../../lib/log.ts';
import { hardwireFiles } from './roles.ts';
import { kubeadmArgv, type ToolArgv } from './kubeadm.ts';
import { translateArgv, translatedPaths, type Tool, type Translated } from './translate.ts';

export interface FlagsOf {
  tool: Tool;
  version: string;
  /** The tool binary's sha256, the command that gave its flags, and where they were read. */
  sha256: string;
  command: string[];
  source: string;
  /** Every flag the tool passes, in its order: its value, the value run, and how. */
  flags: Translated[];
}

/** The tool's flags for `component`, computed before the run (kubeadm: locally, no lab; k0s: live, on a lab host of its own). */
export async function toolArgv(
  tool: Tool,
  inv: Inventory,
  host: Host,
  component: string,
  stateDir: string,
  log: Logger,
): Promise<ToolArgv> {
  if (tool === 'k0s')
    return (await import('./k0s.ts')).k0sArgv(inv, host, component, stateDir, log);
  return kubeadmArgv(inv, host, component, log);
}

/**
 * The argv to run on the host in place of the unit's: the tool's, each path mapped to hardwire's
 * file of the same role (read through the unit's credentials where it loads them); a flag whose
 * hardwire file is not on the host is not run either.
 */
export async function foreignArgv(
  s: Session,
  inv: Inventory,
  host: Host,
  t: ToolArgv,
  unitText: string,
  unit: string,
): Promise<{ argv: string[]; flagsOf: FlagsOf }> {
  const files = hardwireFiles(inv, host, unitText, unit);
  const { flags } = translateArgv(t.tool, t.argv, files, t.hosts);
  for (const [path, names] of translatedPaths(flags, files)) {
    if ((await s.exec(['test', '-e', path], { allowFail: true })).code === 0) continue;
    for (const t2 of flags.filter((f) => names.includes(f.flag))) {
      delete t2.run;
      t2.notProvable = `hardwire's ${path} (${t2.how}) is not on ${host.name}`;
    }
  }
  const argv = [
    t.argv[0]!,
    ...flags.filter((f) => f.run !== undefined).map((f) => `--${f.flag}=${f.run}`),
  ];
  return {
    argv,
    flagsOf: {
      tool: t.tool,
      version: t.version,
      sha256: t.sha256,
      command: t.command,
      source: t.source,
      flags,
    },
  };
}
