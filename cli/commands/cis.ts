// hardwire cis: the real kube-bench on each host of the wired plane (cis/scan.ts), one table per host.
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { act, topCommand, type Cli, type Run } from '../command.ts';
import { gateTimeoutMs, oneOf, options, stateDirFrom, type InventoryOpts } from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { newContext, session } from '../../apply/context.ts';
import { runPhases } from '../../apply/phase.ts';
import { connectPhase } from '../../apply/phases/connect.ts';
import { componentsOn } from '../../components/registry/index.ts';
import { ensureBinary } from '../../components/binaries/index.ts';
import { assetDir } from '../../components/binaries/assets.ts';
import { clusterStateDir } from '../../pki/store.ts';
import { InputError, StepError } from '../../lib/errors.ts';
import { printJson } from '../../lib/log.ts';
import { BENCHMARK, scanHost } from '../../cis/scan.ts';
import { formatMarkdown, formatText, planeTotals, type PlaneReport } from '../../cis/format.ts';
import type { HostReport } from '../../cis/report.ts';

const PLANES = ['hardwire', 'kubeadm', 'k0s'] as const;

const HELP = `
usage: hardwire cis [--plane hardwire] [--inventory FILE] [--state-dir DIR] [--json] [--md FILE] [--quiet]

Runs the real kube-bench (CIS Kubernetes Benchmark ${BENCHMARK}) on every host of the wired plane:
copies kube-bench and its cfg/ to a temporary directory on the host, with hardwire's paths
(cis/hardwire/config.yaml: units instead of Pod manifests, kubeconfigs, etcd data dir), runs the
targets for the host's roles (master and controlplane on control-plane hosts, etcd on etcd hosts),
and removes the directory. Nothing else changes on the host.

Prints PASS/FAIL/WARN/INFO per host and target, then every check that did not pass with
kube-bench's own text and remediation. kube-bench is built from its pinned source archive on first
use (see "hardwire components --help").

  --plane hardwire     the plane to scan (kubeadm and k0s need their live planes, issue 13)
  --md FILE            also write the report as Markdown
  --json               one JSON document: per host, kube-bench's totals, the counts recounted
                       from its checks, and every check
Exit 0 when no check FAILs, 1 when one does.
`;

interface Opts extends InventoryOpts { plane: (typeof PLANES)[number]; json?: boolean; md?: string; gateTimeout: number; acceptNewHostKeys?: boolean }

function checkMdPath(file: string): string {
  const abs = resolve(file);
  if (existsSync(abs) && statSync(abs).isDirectory()) throw new InputError('--md', `${abs} is a directory; name a file such as cis.md`);
  if (!existsSync(dirname(abs))) throw new InputError('--md', `${dirname(abs)} does not exist; create it or name a file in an existing directory`);
  return abs;
}

export function declare(root: Cli): Cli {
  return topCommand(root, 'cis', 'run the real kube-bench (CIS benchmark) on each host of the wired plane', HELP)
    .option('--plane <plane>', 'hardwire (kubeadm and k0s need issue 13)', oneOf('--plane', PLANES), 'hardwire')
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.acceptNewHostKeys())
    .option('--md <file>', 'also write the report as Markdown')
    .addOption(options.gateTimeout())
    .addOption(options.json())
    .addOption(options.quiet())
    .action(act(async ({ opts, log }: Run<Opts>) => {
      if (opts.plane !== 'hardwire') {
        throw new InputError('--plane', `${opts.plane} is scanned on its live plane, which needs the live kubeadm and k0s planes of issue 13; use --plane hardwire`);
      }
      const md = opts.md === undefined ? undefined : checkMdPath(opts.md);
      const inv = await inventoryOrLab(opts, log, false);
      const stateDir = stateDirFrom(opts);
      const bench = await ensureBinary('kube-bench', { kubernetesVersion: inv.cluster.kubernetesVersion, log });
      const ctx = newContext(inv, stateDir, clusterStateDir(stateDir, inv), { dryRun: false, acceptNewHostKeys: opts.acceptNewHostKeys === true, gateTimeoutMs: gateTimeoutMs(opts) }, log);
      const hosts: HostReport[] = [];
      await runPhases([connectPhase, {
        id: 'wired',
        title: 'Check that hardwire is wired on every host (its units active)',
        async run(c) {
          for (const h of c.inv.hosts) {
            const units = componentsOn(h).map((x) => `${x}.service`);
            const r = await session(c, h.name).exec(['systemctl', 'is-active', ...units], { allowFail: true });
            const states = r.stdout.trim().split('\n');
            const down = units.filter((_, i) => states[i] !== 'active');
            if (down.length > 0) throw new StepError('cis', `${down.join(', ')} not active; run "hardwire wire" first (nothing was changed)`, { host: h.name });
          }
        },
      }, {
        id: 'kube-bench',
        title: `Run kube-bench ${bench.version} (${BENCHMARK}) on each host, one at a time`,
        async run(c) {
          const cfgDir = assetDir('kube-bench', bench.version, 'cfg');
          for (const h of c.inv.hosts) hosts.push(await scanHost(c, h, { binary: bench.path, cfgDir }));
        },
      }], ctx);
      const report: PlaneReport = {
        plane: opts.plane, benchmark: BENCHMARK,
        kubeBench: { version: bench.version, sha256: bench.sha256, source: bench.source, origin: bench.origin },
        hosts, totals: planeTotals(hosts),
      };
      if (md) writeFileSync(md, formatMarkdown(report));
      if (opts.json) printJson(report);
      else process.stdout.write(formatText(report));
      return report.totals.FAIL > 0 ? 1 : 0;
    }));
}
