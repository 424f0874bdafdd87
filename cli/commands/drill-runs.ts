// The drills built on harness/drills/runner.ts, one declare function per family: the certificate
// mistakes, 3.C4 (apiserver down, controllers up) and kill-one. Each takes the same options and
// prints the same report; drill.ts registers each family with one line.
import { writeFileSync } from 'node:fs';
import type { Cli, Run } from '../command.ts';
import { act } from '../command.ts';
import {
  connection,
  hostOptions,
  oneOf,
  options,
  renamed,
  seconds,
  stateDirFrom,
  type HostOpts,
  type InventoryOpts,
} from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { printJson } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';
import type { DrillDef } from '../../harness/drills/runner.ts';

interface RunOpts extends InventoryOpts, HostOpts {
  json?: boolean;
  md?: string;
  keepBroken?: boolean;
  hold: number;
  observeTimeout: number;
}

/** A drill that runs outside harness/drills/runner.ts for some options (kill-one --plane k0s): its exit code, or undefined. */
type Takeover<O> = (run: Run<O & RunOpts>) => Promise<number> | undefined;

/** The options every runner drill takes, and its action: run, write --md, print, exit 1 unless recovered. */
export function runnerCommand<O extends object>(
  parent: Cli,
  name: string,
  ids: string[],
  summary: string,
  defOf: (opts: O & RunOpts) => Promise<DrillDef>,
  observeDefaultS = 120,
  takeover?: Takeover<O>,
): Cli {
  const cmd = hostOptions(
    parent
      .command(name)
      .aliases(ids)
      .summary(summary)
      .addOption(options.md())
      .option('--keep-broken', 'stop after the break and print the recovery command')
      .option(
        '--hold <seconds>',
        'keep the cluster broken this long after observing, then recover',
        seconds('--hold', 0),
        0,
      )
      .option(
        '--observe-timeout <seconds>',
        'how long to wait for the failure line and the symptom',
        seconds('--observe-timeout', 10),
        observeDefaultS,
      ),
    { gates: true },
  );
  cmd.action(
    act(async (run: Run<O & RunOpts>) => {
      const other = takeover?.(run);
      if (other) return other;
      const { opts, log } = run;
      if (opts.keepBroken && opts.hold > 0)
        throw new InputError(
          '--hold',
          'does nothing with --keep-broken, which never recovers; drop one of them',
        );
      const def = await defOf(opts);
      const inv = await inventoryOrLab(opts, log, false);
      def.validate?.(inv);
      const { runDrill } = await import('../../harness/drills/runner.ts');
      const { runMarkdown } = await import('../../harness/drills/run-report.ts');
      const report = await runDrill(
        inv,
        stateDirFrom(opts),
        def,
        {
          inventoryFile: inv.file,
          observeTimeoutMs: opts.observeTimeout * 1000,
          ...connection(opts),
          keepBroken: opts.keepBroken === true,
          holdS: opts.hold,
        },
        log,
      );
      const md = runMarkdown(report);
      if (opts.md) writeFileSync(opts.md, md);
      if (opts.json) printJson(report);
      else process.stdout.write(md);
      if (report.keptBroken)
        log.warn(`kept broken; recover with: ${report.keptBroken.recoveryCommand}`);
      return report.keptBroken || report.recovered ? 0 : 1;
    }),
  );
  return cmd;
}

const KINDS = ['wrong-san', 'unknown-ca', 'wrong-client-cert'] as const;

export function declareCertMistakes(drill: Cli): void {
  runnerCommand<{ kind: (typeof KINDS)[number] }>(
    drill,
    'cert-mistake',
    ['3.0', '3.3'],
    '3.0 and 3.3: a certificate mistake: wrong-san, unknown-ca, wrong-client-cert',
    async (o) => {
      if (!o.kind) throw new InputError('--kind', `is required: one of ${KINDS.join(', ')}`);
      return (await import('../../harness/drills/cert-mistakes.ts')).mistakeDrill(o.kind);
    },
  ).option('--kind <kind>', 'which mistake', oneOf('--kind', KINDS));
}

export function declareApiserverDown(drill: Cli): void {
  runnerCommand(
    drill,
    'apiserver-down',
    ['3.C4'],
    '3.C4: every kube-apiserver stopped, the controllers up; then the level-triggered payoff',
    async () => (await import('../../harness/drills/apiserver-down.ts')).apiserverDownDrill(),
  );
}

interface KillOneOpts {
  host?: string;
  plane: 'hardwire' | 'k0s';
  k0sLab?: string;
  keepLabs?: boolean;
}

export function declareKillOne(drill: Cli): void {
  const cmd = runnerCommand<KillOneOpts>(
    drill,
    'kill-one',
    ['3.6'],
    '3.6: SIGKILL kube-apiserver (hardwire) or the k0s controller (--plane k0s), sample health once a second',
    async (o) => {
      if (o.k0sLab !== undefined || o.keepLabs)
        throw new InputError(
          o.k0sLab !== undefined ? '--k0s-lab' : '--keep-labs',
          'only applies to --plane k0s',
        );
      return (await import('../../harness/drills/kill-one.ts')).killOneDrill(o.host);
    },
    60,
    (run) => (run.opts.plane === 'k0s' ? killK0s(run) : undefined),
  )
    .option(
      '--host <host>',
      'the control-plane host whose kube-apiserver is killed (default: the first)',
    )
    .option(
      '--plane <plane>',
      'hardwire or k0s',
      oneOf('--plane', ['hardwire', 'k0s'] as const),
      'hardwire',
    )
    .option(
      '--k0s-lab <name>',
      'with --plane k0s: the lab to (re)create for k0s (default drill-k0s)',
    )
    .option('--keep-labs', 'with --plane k0s: leave the k0s lab up afterwards');
  renamed(cmd, '--keep-lab', '--keep-labs');
}

/** --plane k0s: a fresh 1-host lab with one k0s controller; no inventory, no wired cluster. */
async function killK0s({ opts, log, cmd }: Run<KillOneOpts & RunOpts>): Promise<number> {
  // Options that mean something only to the hardwire half are refused, not ignored.
  const hardwireOnly: [string, boolean][] = [
    ['--host', opts.host !== undefined],
    ['--inventory', opts.inventory !== undefined],
    ['--keep-broken', opts.keepBroken === true],
    ['--hold', cmd.getOptionValueSource('hold') === 'cli'],
    ['--gate-timeout', cmd.getOptionValueSource('gateTimeout') === 'cli'],
    ['--accept-new-host-keys', opts.acceptNewHostKeys === true],
  ];
  const bad = hardwireOnly.find(([, given]) => given);
  if (bad)
    throw new InputError(
      bad[0],
      'does not apply to --plane k0s, which brings up its own 1-host k0s lab; drop it',
    );
  const { labName } = await import('./compare.ts');
  const { DEFAULT_K0S_LAB, killK0s: run } = await import('../../harness/drills/kill-k0s.ts');
  const lab = await labName('--k0s-lab', opts.k0sLab ?? DEFAULT_K0S_LAB);
  const { DEFAULT_LAB_NAME } = await import('../../harness/lab/plan.ts');
  if (lab === DEFAULT_LAB_NAME)
    throw new InputError(
      '--k0s-lab',
      `"${lab}" is the default hardwire lab, which this drill would recreate; pick another name`,
    );
  // k0s restarts after RestartSec=10, then rebuilds every child: allow more than the hardwire half's 60 s.
  const observeS = cmd.getOptionValueSource('observeTimeout') === 'cli' ? opts.observeTimeout : 300;
  const report = await run(
    {
      lab,
      stateDir: stateDirFrom(opts),
      keepLab: opts.keepLabs === true,
      observeMs: observeS * 1000,
      baselineMs: 5000,
    },
    log,
  );
  const { killK0sMarkdown } = await import('../../harness/drills/kill-k0s-report.ts');
  const md = killK0sMarkdown(report);
  if (opts.md) writeFileSync(opts.md, md);
  if (opts.json) printJson(report);
  else process.stdout.write(md);
  if (report.keptLab)
    log.info(
      `lab "${lab}" kept; remove it with: HARDWIRE_STATE=${stateDirFrom(opts)} hardwire lab down --name ${lab}`,
    );
  return report.ok ? 0 : 1;
}
