import { resolve } from 'node:path';
import { act, topCommand, type Cli, type Run } from '../command.ts';
import {
  connection,
  hostOptions,
  options,
  stateDirFrom,
  type HostOpts,
  type InventoryOpts,
} from '../common.ts';
import { inventoryOrLab, inventoryOrLabFile } from '../lab-inventory.ts';
import { PINNED_KUBERNETES } from '../../lib/constants.ts';
import { InputError } from '../../lib/errors.ts';
import { printJson, type Logger } from '../../lib/log.ts';
import type { CheckResult, citations } from '../../harness/learn/index.ts';
import type { LiveCite } from '../../harness/learn/live.ts';
import type { Exercise, Typed } from '../../harness/learn/types.ts';

const HELP = `
usage: hardwire learn                         list the exercises by curriculum id
       hardwire learn ID...                   the task, the commands as typed, what to watch for, the source lines
       hardwire learn [ID...] --check         read the cluster: is the result there, and why not (exit 1);
                                              with no ID, every exercise
       hardwire learn ID... --demo            run the commands as typed, in order, show what they printed, then check
       hardwire learn ID... --demo --live     the same against a debug kube-apiserver under delve, and each
                                              source line a tracepoint can show: seen live, or not seen
  [--inventory FILE] [--state-dir DIR] [--accept-new-host-keys] [--quiet] [--json]

The Phase 3 task list (0.1 to 5.4) on the wired cluster, in the namespace api-lab, with the images
named busybox and nginx (served by the lab registry). The commands are run through bash with the
pinned kubectl on PATH and KUBECONFIG set to the admin's, as a learner types them; curl goes
through kubectl proxy on 127.0.0.1:8001; hardwire in them is this CLI on the same cluster (its
"lab ssh HOST -- CMD" over OpenSSH with the inventory's key). "learn capstone --demo" leaves three
webhooks running in api-lab and traces one create through them (trace apply --capstone).
--check reads the objects, and the apiserver's audit log on every control-plane host for the
requests the learner made and how each was answered.
Each source line is cited at the version the cluster runs, when its source is on this machine.
--live (with --demo) starts a debug kube-apiserver under delve beside the unit on the first
control-plane host, as trace apply does, sets a tracepoint at each line marked [live] (2.1, 3.5a,
3.5b: where "too old resource version" is made), sends the demo's kubectl and kubectl proxy to it,
checks while it runs (its audit log is read too), then removes it; each such line is shown with
its hits and the frame that called it, or "not seen".
`;

type Cited = ReturnType<typeof citations>[number];

const citeLine = (c: Cited) =>
  `  ${c.ref}  ${c.why}${c.note ? ` (${c.note})` : ''}${c.live ? ' [live]' : ''}`;

/** The task as `learn ID` prints it. */
function describe(e: Exercise, cites: Cited[]): string {
  return `${[
    `${e.id}  ${e.title}   (${e.section})`,
    '',
    ...e.task,
    '',
    'Type:',
    ...e.commands.map((c) => `  ${c.replaceAll('\n', '\n  ')}`),
    '',
    'Watch for:',
    ...e.watch.map((w) => `  ${w}`),
    ...(cites.length ? ['', 'Where it happens:', ...cites.map(citeLine)] : []),
    '',
    `Then: hardwire learn ${e.id} --check`,
  ].join('\n')}\n`;
}

type Result = CheckResult & { typed?: Typed[]; cites: Cited[]; live?: LiveCite[] };

/** One result: with --demo each line as typed and what it printed; then done, or why not; with --live, what delve saw. */
function print(r: Result, withCites: boolean, liveLine: (l: LiveCite) => string): void {
  for (const t of r.typed ?? [])
    process.stdout.write(
      `$ ${t.line.replaceAll('\n', '\n> ')}\n${t.output ? `${t.output}\n` : ''}${t.code === 0 ? '' : `[exit ${t.code}]\n`}`,
    );
  process.stdout.write(
    r.done
      ? `${r.id} done: the result is on the cluster\n`
      : `${r.id} not done:\n${r.findings.map((f) => `  - ${f}`).join('\n')}\n`,
  );
  if (withCites || r.typed) for (const c of r.cites) process.stdout.write(`${citeLine(c)}\n`);
  if (r.live?.length)
    process.stdout.write(`Seen live (tracepoints):\n${r.live.map(liveLine).join('\n')}\n`);
}

/** The version the lab or inventory says the cluster runs, read from the file only; the pinned one without a lab. */
async function runningVersion(opts: InventoryOpts, log: Logger): Promise<string> {
  try {
    return (await inventoryOrLabFile(opts, log)).cluster.kubernetesVersion;
  } catch (err) {
    if (err instanceof InputError && !opts.inventory) return PINNED_KUBERNETES;
    throw err;
  }
}

interface Opts extends InventoryOpts, HostOpts {
  demo?: boolean;
  check?: boolean;
  live?: boolean;
  json?: boolean;
}

export function declare(root: Cli): Cli {
  const learn = topCommand(
    root,
    'learn',
    'the Phase 3 exercises on the wired cluster: the task, a demo, a check',
    HELP,
  )
    .argument('[ids...]')
    .option('--demo', 'run the commands as typed, then check')
    .option('--check', 'read the cluster for the result')
    .option(
      '--live',
      "with --demo: run it against a debug kube-apiserver under delve and show each traceable line's hits",
    )
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.json());
  hostOptions(learn, { gates: false }).action(
    act(async ({ opts, log }: Run<Opts>, ids: string[]) => {
      const { EXERCISES, exercise, citations, check, demo } = await import(
        '../../harness/learn/index.ts'
      );
      if (opts.demo && opts.check)
        throw new InputError('--demo', 'runs the check itself; give --demo or --check, not both');
      if (opts.live && !opts.demo)
        throw new InputError(
          '--live',
          'traces a demo; add --demo, e.g. hardwire learn 2.1 --demo --live',
        );
      if (ids.length === 0 && opts.demo)
        throw new InputError(
          'ID',
          'name the exercises to demo, in order, e.g. hardwire learn 0.1 0.2 --demo',
        );
      if (ids.length === 0 && !opts.check) {
        if (opts.json)
          printJson(EXERCISES.map((e) => ({ id: e.id, section: e.section, title: e.title })));
        else {
          let section = '';
          for (const e of EXERCISES) {
            if (e.section !== section)
              process.stdout.write(`${section ? '\n' : ''}${(section = e.section)}\n`);
            process.stdout.write(`  ${e.id.padEnd(5)} ${e.title}\n`);
          }
        }
        return 0;
      }
      // Every id is checked before anything connects; --check alone checks them all.
      const chosen = ids.length === 0 ? [...EXERCISES] : ids.map(exercise);
      const live = opts.live ? await import('../../harness/learn/live.ts') : undefined;
      if (live && live.liveCites(chosen).length === 0)
        throw new InputError(
          '--live',
          `${chosen.map((e) => e.id).join(', ')} cite no line a tracepoint can show; --live demos ${EXERCISES.filter(
            (e) => e.cites.some((c) => c.live),
          )
            .map((e) => e.id)
            .join(', ')}`,
        );
      if (!opts.demo && !opts.check) {
        const running = await runningVersion(opts, log);
        if (opts.json)
          printJson(chosen.map((e) => ({ ...e, check: undefined, cites: citations(e, running) })));
        else process.stdout.write(chosen.map((e) => describe(e, citations(e, running))).join('\n'));
        return 0;
      }
      const inv = await inventoryOrLab(opts, log, false);
      const { withLearnEnv } = await import('../../harness/learn/env.ts');
      const results = await withLearnEnv(
        inv,
        stateDirFrom(opts),
        connection(opts),
        log,
        async (env) => {
          const out: Result[] = [];
          const emit = (e: Exercise, r: CheckResult & { typed?: Typed[]; live?: LiveCite[] }) => {
            out.push({ ...r, cites: citations(e, inv.cluster.kubernetesVersion) });
            if (!opts.json)
              print(
                out.at(-1)!,
                opts.demo === true && chosen.length === 1,
                live?.liveLine ?? String,
              );
          };
          if (live)
            await live.liveDemos(env, chosen, log, (e, r, seen) => emit(e, { ...r, live: seen }));
          else
            for (const e of chosen) emit(e, opts.demo ? await demo(env, e) : await check(env, e));
          return out;
        },
        [
          ...(opts.inventory ? ['--inventory', resolve(opts.inventory)] : []),
          ...(opts.stateDir ? ['--state-dir', resolve(opts.stateDir)] : []),
          ...(opts.acceptNewHostKeys ? ['--accept-new-host-keys'] : []),
        ],
      );
      if (opts.json) printJson(results);
      const missing = results.filter((r) => !r.done);
      if (!opts.json && chosen.length > 1)
        process.stdout.write(`${results.length - missing.length} of ${results.length} done\n`);
      if (missing.length > 0)
        process.stderr.write(
          `error: learn ${missing[0]!.id}: ${missing[0]!.findings[0]}${missing.length > 1 ? ` (and ${missing.length - 1} more not done)` : ''}\n`,
        );
      return missing.length === 0 ? 0 : 1;
    }),
  );
  return learn;
}
