import { act, topCommand, type Cli, type Run } from '../command.ts';
import {
  connection,
  hostOptions,
  options,
  stateDirFrom,
  type HostOpts,
  type InventoryOpts,
} from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { InputError } from '../../lib/errors.ts';
import { printJson } from '../../lib/log.ts';
import type { CheckResult } from '../../harness/learn/index.ts';
import type { Typed } from '../../harness/learn/types.ts';

const HELP = `
usage: hardwire learn                         list the exercises by curriculum id
       hardwire learn ID                      the task, the commands as typed, what to watch for, the source lines
       hardwire learn ID --check              read the cluster: is the result there, and why not (exit 1)
       hardwire learn ID --demo               run the commands as typed, show what they printed, then check
  [--inventory FILE] [--state-dir DIR] [--accept-new-host-keys] [--quiet] [--json]

The Phase 3 task list (0.1 to 5.4) on the wired cluster, in the namespace api-lab, with the images
named busybox and nginx (served by the lab registry). The commands are run through bash with the
pinned kubectl on PATH and KUBECONFIG set to the admin's, as a learner types them; curl goes
through kubectl proxy on 127.0.0.1:8001. --check reads the objects, and the apiserver's audit log on
every control-plane host for the requests the learner made and how each was answered.
Each source line is cited at the version the cluster runs, when its source is on this machine.
`;

interface Opts extends InventoryOpts, HostOpts {
  demo?: boolean;
  check?: boolean;
  json?: boolean;
}

export function declare(root: Cli): Cli {
  const learn = topCommand(
    root,
    'learn',
    'the Phase 3 exercises on the wired cluster: the task, a demo, a check',
    HELP,
  )
    .argument('[id]')
    .option('--demo', 'run the commands as typed, then check')
    .option('--check', 'read the cluster for the result')
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.json());
  hostOptions(learn, { gates: false }).action(
    act(async ({ opts, log }: Run<Opts>, id: string | undefined) => {
      const { EXERCISES, exercise, citations, check, demo } = await import(
        '../../harness/learn/index.ts'
      );
      if (opts.demo && opts.check)
        throw new InputError('--demo', 'runs the check itself; give --demo or --check, not both');
      if (id === undefined) {
        if (opts.demo || opts.check)
          throw new InputError(
            'ID',
            `name the exercise to ${opts.demo ? 'demo' : 'check'}, e.g. hardwire learn 0.1 --check`,
          );
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
      const e = exercise(id);
      if (!opts.demo && !opts.check) {
        const { PINNED_KUBERNETES } = await import('../../lib/constants.ts');
        const cites = citations(e, PINNED_KUBERNETES);
        if (opts.json) printJson({ ...e, check: undefined, cites });
        else {
          const out = [
            `${e.id}  ${e.title}   (${e.section})`,
            '',
            ...e.task,
            '',
            'Type:',
            ...e.commands.map((c) => `  ${c.replaceAll('\n', '\n  ')}`),
            '',
            'Watch for:',
            ...e.watch.map((w) => `  ${w}`),
            ...(cites.length
              ? [
                  '',
                  'Where it happens:',
                  ...cites.map((c) => `  ${c.ref}  ${c.why}${c.note ? ` (${c.note})` : ''}`),
                ]
              : []),
            '',
            `Then: hardwire learn ${e.id} --check`,
          ];
          process.stdout.write(`${out.join('\n')}\n`);
        }
        return 0;
      }
      const inv = await inventoryOrLab(opts, log, false);
      const { withLearnEnv } = await import('../../harness/learn/env.ts');
      const r = await withLearnEnv(inv, stateDirFrom(opts), connection(opts), log, async (env) => {
        const result: CheckResult & { typed?: Typed[] } = opts.demo
          ? await demo(env, e)
          : await check(env, e);
        return { ...result, cites: citations(e, inv.cluster.kubernetesVersion) };
      });
      if (opts.json) printJson(r);
      else {
        for (const t of r.typed ?? [])
          process.stdout.write(
            `$ ${t.line.replaceAll('\n', '\n> ')}\n${t.output ? `${t.output}\n` : ''}${t.code === 0 ? '' : `[exit ${t.code}]\n`}`,
          );
        process.stdout.write(
          r.done
            ? `${e.id} done: the result is on the cluster\n`
            : `${e.id} not done:\n${r.findings.map((f) => `  - ${f}`).join('\n')}\n`,
        );
        for (const c of r.cites)
          process.stdout.write(`  ${c.ref}  ${c.why}${c.note ? ` (${c.note})` : ''}\n`);
      }
      if (!r.done) process.stderr.write(`error: learn ${e.id}: ${r.findings[0]}\n`);
      return r.done ? 0 : 1;
    }),
  );
  return learn;
}
