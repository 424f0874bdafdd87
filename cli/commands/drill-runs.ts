// The drills built on drills/runner.ts, one declare function per family: the certificate
// mistakes, 3.C4 (apiserver down, controllers up) and kill-one. Each takes the same options and
// prints the same report; drill.ts registers each family with one line.
import { writeFileSync } from 'node:fs';
import type { Cli, Run } from '../command.ts';
import { act } from '../command.ts';
import { gateTimeoutMs, oneOf, options, seconds, stateDirFrom, type InventoryOpts } from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { printJson } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';
import type { DrillDef } from '../../drills/runner.ts';

interface RunOpts extends InventoryOpts {
  json?: boolean;
  md?: string;
  keepBroken?: boolean;
  hold: number;
  observeTimeout: number;
  gateTimeout: number;
}

/** The options every runner drill takes, and its action: run, write --md, print, exit 1 unless recovered. */
export function runnerCommand<O extends object>(parent: Cli, name: string, summary: string, defOf: (opts: O & RunOpts) => Promise<DrillDef>, observeDefaultS = 120): Cli {
  const cmd = parent.command(name).summary(summary)
    .option('--md <file>', 'write the Markdown report to FILE')
    .option('--keep-broken', 'stop after the break and print the recovery command')
    .option('--hold <seconds>', 'keep the cluster broken this long after observing, then recover', seconds('--hold', 0), 0)
    .option('--observe-timeout <seconds>', 'how long to wait for the failure line and the symptom', seconds('--observe-timeout', 10), observeDefaultS)
    .addOption(options.gateTimeout());
  cmd.action(act(async ({ opts, log }: Run<O & RunOpts>) => {
    if (opts.keepBroken && opts.hold > 0) throw new InputError('--hold', 'does nothing with --keep-broken, which never recovers; drop one of them');
    const def = await defOf(opts);
    const inv = await inventoryOrLab(opts, log, false);
    def.validate?.(inv);
    const { runDrill } = await import('../../drills/runner.ts');
    const { runMarkdown } = await import('../../drills/run-report.ts');
    const report = await runDrill(inv, stateDirFrom(opts), def, {
      inventoryFile: inv.file, observeTimeoutMs: opts.observeTimeout * 1000, gateTimeoutMs: gateTimeoutMs(opts), keepBroken: opts.keepBroken === true, holdS: opts.hold,
    }, log);
    const md = runMarkdown(report);
    if (opts.md) writeFileSync(opts.md, md);
    if (opts.json) printJson(report);
    else process.stdout.write(md);
    if (report.keptBroken) log.warn(`kept broken; recover with: ${report.keptBroken.recoveryCommand}`);
    return report.keptBroken || report.recovered ? 0 : 1;
  }));
  return cmd;
}

const KINDS = ['wrong-san', 'unknown-ca', 'wrong-client-cert'] as const;

export function declareCertMistakes(drill: Cli): void {
  runnerCommand<{ kind: typeof KINDS[number] }>(drill, 'cert-mistake', 'a certificate mistake: wrong-san, unknown-ca, wrong-client-cert', async (o) => {
    if (!o.kind) throw new InputError('--kind', `is required: one of ${KINDS.join(', ')}`);
    return (await import('../../drills/cert-mistakes.ts')).mistakeDrill(o.kind);
  }).option('--kind <kind>', 'which mistake', oneOf('--kind', KINDS));
}

export function declareApiserverDown(drill: Cli): void {
  runnerCommand(drill, 'apiserver-down', 'drill 3.C4: every kube-apiserver stopped, the controllers up; then the level-triggered payoff', async () => (await import('../../drills/apiserver-down.ts')).apiserverDownDrill());
}

export function declareKillOne(drill: Cli): void {
  runnerCommand<{ host?: string }>(drill, 'kill-one', 'module 3.6, hardwire half: SIGKILL kube-apiserver on one host, sample health once a second', async (o) => (await import('../../drills/kill-one.ts')).killOneDrill(o.host), 60)
    .option('--host <host>', 'the control-plane host whose kube-apiserver is killed (default: the first)');
}
