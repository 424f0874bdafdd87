// `hardwire trace apply`: one kubectl apply traced through a debug kube-apiserver under delve (harness/trace).
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { act, group, topCommand, type Cli, type Run } from '../command.ts';
import {
  hostOptions,
  options,
  seconds,
  stateDirFrom,
  type HostOpts,
  type InventoryOpts,
} from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { printJson } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';

const HELP = `
usage: hardwire trace apply [-f FILE] [--authz-user NAME | --webhook-reject | --capstone] [--md FILE] [--html FILE] [--json] [--inventory FILE] [--state-dir DIR]
                           [--ready-timeout SECONDS] [--accept-new-host-keys] [--quiet]

Runs a debug kube-apiserver (-N -l, symbols kept) under delve on the first control-plane host,
beside the unit (same flags; port 16443, its own audit log, no endpoint reconciler; the unit keeps
serving), runs "kubectl apply -f FILE" against it, and records each stage of the handler chain and
the write path down to the etcd client's Txn: its file:line at the tag, its function and its
goroutine. The stages are the frames of the goroutine stacks delve returns at a few breakpoints
(mutating and validating admission, the kind's validation, etcd3 store.Create, the etcd KV Txn),
outermost first; the curriculum's nine are marked. The debug instance is removed afterwards.

  -f FILE          one new object (default: a ConfigMap hardwire-trace-<time> in namespace default)
  --authz-user NAME  first "kubectl --as NAME create" the object with no RBAC binding: authorization
                   rejects it, and the trace names where (the caller of responsewriters.Forbidden,
                   from the live stack); then bind NAME to a Role allowing get and create of the kind
                   in the object's namespace (removed afterwards) and trace "kubectl --as NAME apply"
  --webhook-reject  trace a create that a validating webhook rejects: hardwire's webhook (built from
                   core/components/go/webhook) on the host's 127.0.0.1:16444, TLS from a CA made for
                   the run, and a ValidatingWebhookConfiguration sending it this object's create
                   alone (both removed afterwards). The object must be a ConfigMap with a data key
                   "forbidden" (the default object gets one). The trace names where admission calls
                   out, where the answer comes back and where it becomes the rejection
  --capstone       trace a create through the three webhooks "hardwire learn capstone" deploys (run
                   it first): -f is a Thermo of capstone.learn.hardwire.dev/v2 in api-lab; the
                   trace names where the create called the mutating, the validating and the
                   conversion webhook (v2 to the stored v1, inside etcd3 store.Create)
  --md FILE        also write the trace as Markdown
  --html FILE      also write it as one self-contained HTML page
  --json           the report, with delve's replies verbatim, on stdout
  --ready-timeout  seconds to wait for the debug apiserver to be healthy (default 600)
`;

interface Opts extends InventoryOpts, HostOpts {
  authzUser?: string;
  webhookReject?: boolean;
  capstone?: boolean;
  filename?: string;
  md?: string;
  html?: string;
  json?: boolean;
  readyTimeout?: number;
}

export function declare(root: Cli): Cli {
  const trace = topCommand(
    root,
    'trace',
    'trace one kubectl apply through a debug kube-apiserver under delve, stage by stage',
    HELP,
  );
  const apply = trace
    .command('apply')
    .option('-f, --filename <file>', 'the object to create')
    .option(
      '--authz-user <name>',
      'first a create authorization rejects (no binding), then admits (bound)',
    )
    .option('--webhook-reject', 'trace a create that a validating webhook rejects')
    .option('--capstone', "trace a create through learn capstone's three webhooks")
    .addOption(options.md('the trace'))
    .addOption(options.html('the trace'))
    .option(
      '--ready-timeout <seconds>',
      'how long the debug apiserver may take to start',
      seconds('--ready-timeout', 1),
    )
    .addOption(options.inventory())
    .addOption(options.stateDir())
    .addOption(options.json());
  // Its one wait is the debug apiserver's start, --ready-timeout; it runs no gate of wire's.
  hostOptions(apply, { gates: false }).action(
    act(async ({ opts, log }: Run<Opts>) => {
      if (opts.authzUser !== undefined && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(opts.authzUser))
        throw new InputError(
          '--authz-user',
          `"${opts.authzUser}" is not a user name of lower-case letters, digits and dashes; e.g. --authz-user trace-user`,
        );
      const { readObject, defaultObject } = await import('../../harness/trace/object.ts');
      const stateDir = stateDirFrom(opts);
      if (opts.webhookReject && opts.authzUser !== undefined)
        throw new InputError(
          '--webhook-reject',
          'traces one rejected create; drop --authz-user, or run the two traces one after the other',
        );
      if (opts.capstone && (opts.webhookReject || opts.authzUser !== undefined))
        throw new InputError(
          '--capstone',
          "traces one create through the capstone's webhooks; drop --webhook-reject and --authz-user, or run the traces one after the other",
        );
      if (opts.capstone && opts.filename === undefined)
        throw new InputError(
          '--capstone',
          'needs -f FILE, a Thermo of capstone.learn.hardwire.dev/v2 in api-lab (hardwire learn capstone writes thermo-traced.yaml)',
        );
      const { DENIED_KEY, requireDenied } = await import('../../harness/trace/webhook.ts');
      const obj =
        opts.filename === undefined
          ? defaultObject(
              join(stateDir, 'trace'),
              new Date(),
              opts.webhookReject ? DENIED_KEY : undefined,
            )
          : readObject(resolve(opts.filename));
      if (opts.webhookReject) requireDenied(obj);
      if (opts.capstone) (await import('../../harness/trace/capstone.ts')).requireCapstone(obj);
      if (opts.authzUser !== undefined && !obj.namespace)
        throw new InputError(
          '--authz-user',
          `binds a Role in the object's namespace; give ${obj.file} a metadata.namespace`,
        );
      const inv = await inventoryOrLab(opts, log, false);
      const { traceApply } = await import('../../harness/trace/index.ts');
      const report = await traceApply(
        inv,
        stateDir,
        obj,
        {
          readyTimeoutMs: (opts.readyTimeout ?? 600) * 1000,
          acceptNewHostKeys: opts.acceptNewHostKeys === true,
          ...(opts.authzUser ? { authzUser: opts.authzUser } : {}),
          ...(opts.webhookReject ? { webhookReject: true } : {}),
          ...(opts.capstone ? { capstone: true } : {}),
        },
        log,
      );
      const { formatMarkdown, formatText } = await import('../../harness/trace/format.ts');
      if (opts.md) writeFileSync(opts.md, formatMarkdown(report));
      if (opts.html)
        writeFileSync(opts.html, (await import('../../harness/trace/html.ts')).formatHtml(report));
      if (opts.json) printJson(report);
      else process.stdout.write(formatText(report));
      return 0;
    }),
  );
  return group(trace);
}
