// hardwire cis: the real kube-bench on each host of a plane (cis/plane.ts), one table per host.
import { writeFileSync } from 'node:fs';
import { act, topCommand, type Cli, type Run } from '../command.ts';
import {
  connection,
  hostOptions,
  oneOf,
  options,
  stateDirFrom,
  type HostOpts,
  type InventoryOpts,
} from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { StepError, InputError } from '../../lib/errors.ts';
import { printJson } from '../../lib/log.ts';
import { BENCHMARK } from '../../harness/cis/scan.ts';
import { formatMarkdown, formatText, type PlaneReport } from '../../harness/cis/format.ts';
import { CIS_PLANES, scanHardwire, type CisPlane } from '../../harness/cis/plane.ts';

const HELP = `
usage: hardwire cis [--plane hardwire|kubeadm|k0s] [--inventory FILE] [--state-dir DIR] [--json] [--md FILE] [--quiet]
                   [--accept-new-host-keys] [--gate-timeout SECONDS] [--kubeadm-lab NAME] [--k0s-lab NAME] [--keep-labs]

Runs the real kube-bench (CIS Kubernetes Benchmark ${BENCHMARK}) on every host of the wired plane:
copies kube-bench and its cfg/ to a temporary directory on the host, with hardwire's paths
(harness/cis/hardwire/config.yaml: units instead of Pod manifests, kubeconfigs, etcd data dir), runs the
targets for the host's roles (master and controlplane on control-plane hosts, etcd on etcd hosts,
node on worker hosts), and removes the directory. Nothing else changes on the host.

Prints PASS/FAIL/WARN/INFO per host and target, then every check that did not pass with
kube-bench's own text and remediation. kube-bench is built from its pinned source archive on first
use (see "hardwire components --help").

  --plane PLANE        hardwire (default): every host of the wired plane, with harness/cis/hardwire/config.yaml.
                       kubeadm, k0s: their live planes, brought up on a fresh lab exactly as
                       "hardwire compare" does (--kubeadm-lab, --k0s-lab; removed afterwards unless
                       --keep-labs), scanned on the first controller: kubeadm with kube-bench's stock
                       profile, k0s with harness/cis/k0s/config.yaml
  --md FILE            also write the report as Markdown
  --json               one JSON document: per host, kube-bench's totals, the counts recounted
                       from its checks, and every check
Exit 0 when no check FAILs, 1 when one does.
`;

interface Opts extends InventoryOpts, HostOpts {
  plane: CisPlane;
  kubeadmLab: string;
  k0sLab: string;
  keepLabs?: boolean;
  json?: boolean;
  md?: string;
}

export function declare(root: Cli): Cli {
  const cis = topCommand(
    root,
    'cis',
    'run the real kube-bench (CIS benchmark) on each host of the wired plane',
    HELP,
  )
    .option('--plane <plane>', 'hardwire, kubeadm or k0s', oneOf('--plane', CIS_PLANES), 'hardwire')
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.md())
    .addOption(options.json());
  return hostOptions(cis, { gates: true })
    .option(
      '--kubeadm-lab <name>',
      'lab for the kubeadm plane (--plane kubeadm)',
      'compare-kubeadm',
    )
    .option('--k0s-lab <name>', 'lab for the k0s plane (--plane k0s)', 'compare-k0s')
    .option('--keep-labs', 'leave the kubeadm/k0s lab hosts up')
    .action(
      act(async ({ opts, log, cmd }: Run<Opts>) => {
        const md = opts.md;
        if (opts.plane === 'hardwire') {
          for (const [flag, src] of [
            ['--kubeadm-lab', 'kubeadmLab'],
            ['--k0s-lab', 'k0sLab'],
            ['--keep-labs', 'keepLabs'],
          ] as const) {
            if (cmd.getOptionValueSource(src) === 'cli')
              throw new InputError(flag, 'only applies to --plane kubeadm or k0s');
          }
        }
        const inv = await inventoryOrLab(opts, log, false);
        const stateDir = stateDirFrom(opts);
        let report: PlaneReport;
        if (opts.plane === 'hardwire') {
          report = await scanHardwire(inv, stateDir, connection(opts), log);
        } else {
          // The kubeadm and k0s planes exist only while compare's collector runs them on a fresh lab.
          const { clusterParams, pickHost } = await import('../../harness/compare/index.ts');
          const params = clusterParams(inv, pickHost(inv));
          const ctx = { inv, params, stateDir, log, cis: true };
          const keep = opts.keepLabs === true;
          const { labName } = await import('./compare.ts');
          const lab =
            opts.plane === 'kubeadm'
              ? await labName('--kubeadm-lab', opts.kubeadmLab)
              : await labName('--k0s-lab', opts.k0sLab);
          const collector =
            opts.plane === 'kubeadm'
              ? (await import('../../harness/planes/kubeadm.ts')).kubeadmCollector({ lab, keep })
              : (await import('../../harness/planes/k0s/index.ts')).k0sCollector({ lab, keep });
          const plane = await collector.collect(ctx);
          if (!plane.cis)
            throw new StepError('cis', `the ${opts.plane} plane did not come up: ${plane.why}`);
          report = plane.cis;
        }
        if (md) writeFileSync(md, formatMarkdown(report));
        if (opts.json) printJson(report);
        else process.stdout.write(formatText(report));
        return report.totals.FAIL > 0 ? 1 : 0;
      }),
    );
}
