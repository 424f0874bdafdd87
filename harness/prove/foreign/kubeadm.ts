// kubeadm's command line for one component, from the real kubeadm at the cluster's version: its own
// `init phase` with --dry-run, on the operator's machine, writes the static Pod manifest into a
// scratch dir (KUBEADM_INIT_DRYRUN_DIR; nothing under /etc/kubernetes), and the manifest's command
// is read back as compare's kubeadm plane reads it. The config is compare's (kubeadmConfig), for
// the host prove runs on: the same cluster's name, CIDRs, address and extraArgs.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Host, Inventory } from '../../../core/inventory/load.ts';
import { ensureBinary } from '../../../core/components/binaries/index.ts';
import { run } from '../../../lib/proc.ts';
import { StepError } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/log.ts';
import { kubeadmConfig } from '../../planes/kubeadm.ts';
import { clusterParams } from '../../compare/index.ts';
import type { HostValue, Tool } from './translate.ts';
import {
  rowOf,
  type ControlPlaneName,
  type PerComponent,
} from '../../../core/components/registry/index.ts';

/** The phase that writes each component's manifest, and the manifest's file name. */
export const KUBEADM_PHASES: PerComponent<{ phase: string[]; manifest: string }, ControlPlaneName> =
  {
    'kube-apiserver': { phase: ['control-plane', 'apiserver'], manifest: 'kube-apiserver.yaml' },
    'kube-controller-manager': {
      phase: ['control-plane', 'controller-manager'],
      manifest: 'kube-controller-manager.yaml',
    },
    'kube-scheduler': { phase: ['control-plane', 'scheduler'], manifest: 'kube-scheduler.yaml' },
    etcd: { phase: ['etcd', 'local'], manifest: 'etcd.yaml' },
  };

export interface ToolArgv {
  /** The component's command as the tool passes it; argv[0] the binary. */
  argv: string[];
  tool: Tool;
  /** The tool's own host's values to replace by the prove host's (k0s, which runs on a lab host of its own). */
  hosts?: HostValue[];
  version: string;
  sha256: string;
  /** The command that produced it, and where its flags were read. */
  command: string[];
  source: string;
}

/** The container's command (and args) of a static Pod manifest. */
export function manifestCommand(text: string): string[] {
  const doc = parseYaml(text) as {
    spec?: { containers?: { command?: string[]; args?: string[] }[] };
  };
  const c = doc.spec?.containers?.[0];
  return [...(c?.command ?? []), ...(c?.args ?? [])];
}

export async function kubeadmArgv(
  inv: Inventory,
  host: Host,
  component: string,
  log: Logger,
): Promise<ToolArgv> {
  const spec = rowOf(KUBEADM_PHASES, component);
  if (!spec) throw new StepError('flags prove', `kubeadm writes no manifest for ${component}`);
  const version = inv.cluster.kubernetesVersion;
  const bin = await ensureBinary('kubeadm', { kubernetesVersion: version, log });
  const dir = mkdtempSync(join(tmpdir(), 'hardwire-kubeadm-'));
  try {
    writeFileSync(join(dir, 'kubeadm.yaml'), kubeadmConfig(clusterParams(inv, host)), {
      mode: 0o600,
    });
    const out = join(dir, 'out');
    const command = [
      bin.path,
      'init',
      'phase',
      ...spec.phase,
      '--dry-run',
      '--config',
      join(dir, 'kubeadm.yaml'),
    ];
    log.info(
      `  kubeadm's flags for ${component}: ${['kubeadm', ...command.slice(1, -2), '--config', 'kubeadm.yaml'].join(' ')} (KUBEADM_INIT_DRYRUN_DIR: a scratch dir)`,
    );
    await run(command[0]!, command.slice(1), {
      step: 'kubeadm dry-run',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', KUBEADM_INIT_DRYRUN_DIR: out },
      timeoutMs: 60_000,
    });
    const argv = manifestCommand(readFileSync(join(out, spec.manifest), 'utf8'));
    if (argv.length === 0)
      throw new StepError('flags prove', `kubeadm's ${spec.manifest} has no command`);
    return {
      argv,
      tool: 'kubeadm',
      version,
      sha256: bin.sha256,
      command: ['kubeadm', ...command.slice(1, -1), 'kubeadm.yaml'],
      source: `${spec.manifest} (static Pod manifest, container command)`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
