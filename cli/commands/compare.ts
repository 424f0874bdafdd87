import type { Command } from '../command.ts';
import { parse } from '../args.ts';
import { stateDirFrom } from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { runCompare } from '../../compare/index.ts';
import { markdown, summary } from '../../compare/text.ts';
import { html } from '../../compare/html.ts';
import { PLANES } from '../../compare/types.ts';
import { StepError } from '../../lib/errors.ts';

export const command: Command = {
  name: 'compare',
  summary: 'hardwire vs real kubeadm vs real k0s at the pinned version: flags, certificates, processes',
  help: `
usage: hardwire compare [--inventory FILE] [--host NAME] [--state-dir DIR] [--json FILE] [--md FILE] [--html FILE]
                        [--allow-partial] [--no-live] [--kubeadm-lab NAME] [--k0s-lab NAME] [--k0s-binary PATH] [--keep-labs]

Collects three control planes built with the same parameters (advertise address, service CIDR,
pod CIDR, cluster name, DNS domain, Kubernetes version) and compares them flag by flag, cert by
cert and process by process. Every value comes from running the tool:
  hardwire  the rendered host tree of --host (default: first etcd+control-plane host) and, when
            its units run, their live command lines from /proc/<pid>/cmdline (--no-live: skip SSH)
  kubeadm   a fresh 1-host lab (--kubeadm-lab, default "compare-kubeadm", recreated each run)
            runs the real kubeadm: init phase certs all, kubeconfig all, etcd local,
            control-plane all; then /etc/kubernetes/manifests, /etc/kubernetes/pki and *.conf
  k0s       the real "k0s controller" on a fresh lab (--k0s-lab, default "compare-k0s"), with the
            k0s binary from the component cache or --k0s-binary PATH (untested: no k0s binary
            could be obtained where this was written)
Flag values are path-normalised (<pki>/, <conf>/, <etcd-data>); raw values stay in the JSON.
"registered at" / "read at" come from the flag map (flags/data/<version>/).

Without --inventory, uses the local lab's inventory (hardwire lab up). A plane that cannot be
collected is reported with the reason, and the command exits 1 unless --allow-partial.

  --json FILE   the full report as one JSON document ("-" for stdout)
  --md FILE     Markdown report
  --html FILE   one self-contained HTML file (sortable matrices, differences highlighted)
  --keep-labs   leave the kubeadm/k0s lab hosts up for inspection
Without --json -, stdout carries a readable summary; progress goes to stderr.
`,
  async run({ argv, log }) {
    const { values } = parse(argv, {
      inventory: { type: 'string', short: 'i' }, 'state-dir': { type: 'string' }, host: { type: 'string' },
      json: { type: 'string' }, md: { type: 'string' }, html: { type: 'string' },
      'allow-partial': { type: 'boolean' }, 'no-live': { type: 'boolean' }, 'keep-labs': { type: 'boolean' },
      'kubeadm-lab': { type: 'string' }, 'k0s-lab': { type: 'string' }, 'k0s-binary': { type: 'string' },
      quiet: { type: 'boolean' },
    }, false);
    const { validateLabName } = await import('../../lab/plan.ts');
    const kubeadmLab = values['kubeadm-lab'] ?? 'compare-kubeadm';
    const k0sLab = values['k0s-lab'] ?? 'compare-k0s';
    validateLabName(kubeadmLab);
    validateLabName(k0sLab);
    const inv = await inventoryOrLab(values, log, false);
    const report = await runCompare({
      inv, stateDir: stateDirFrom(values), log, live: values['no-live'] !== true,
      ...(values.host ? { host: values.host } : {}),
      kubeadmLab, k0sLab, keepLabs: values['keep-labs'] === true,
      ...(values['k0s-binary'] ? { k0sBinary: resolve(values['k0s-binary']) } : {}),
    });
    const written: string[] = [];
    const write = (file: string | undefined, text: string) => {
      if (!file || file === '-') return;
      writeFileSync(file, text);
      written.push(resolve(file));
    };
    write(values.json, `${JSON.stringify(report, null, 2)}\n`);
    write(values.md, markdown(report));
    write(values.html, html(report));
    if (values.json === '-') process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else process.stdout.write(summary(report, written));
    const missing = PLANES.filter((p) => !report.planes[p].collected);
    if (missing.length && values['allow-partial'] !== true) {
      throw new StepError('compare', `${missing.join(', ')} could not be collected; rerun with --allow-partial to accept a partial report`,
        { detail: missing.map((p) => `${p}: ${report.planes[p].why}`) });
    }
    for (const p of missing) log.warn(`partial report: ${p} not collected: ${report.planes[p].why}`);
    return 0;
  },
};
