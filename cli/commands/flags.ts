// `hardwire flags`: where each component flag is registered and where its value is read.
import { act, topCommand, type Cli, type Run } from '../command.ts';
import { options, renamed } from '../common.ts';
import { InputError } from '../../lib/errors.ts';
import { printJson, type Logger } from '../../lib/log.ts';
import {
  bestCitation,
  defaultFlagVersion,
  explain,
  flagComponents,
  isFlagComponent,
  mappedComponents,
  loadFlagMap,
  normalizeFlagName,
  siteRef,
  type ConfigSection,
} from '../../core/flags/map.ts';
import { declareProve } from './flags-prove.ts';

const help = `
usage: hardwire flags [component] [--flag NAME] [--json] [--kubernetes-version V]
       hardwire flags explain <component> --<flag-name> [--json] [--kubernetes-version V]
       hardwire flags verify [--json] [--kubernetes-version V | --etcd V]
       hardwire flags --regenerate [--kubernetes-version V | --etcd V]
       hardwire flags prove --component kube-scheduler [--inventory FILE] [--state-dir DIR] [--json] [--md FILE] [--html FILE]
                            [--accept-new-host-keys] [--gate-timeout SECONDS] [--quiet]
       hardwire flags prove --reclassify [--component C] [--json]

Shows the flag map: for every flag of etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, the kubelet and kube-proxy, the file:line where it is registered, the Go field it is
bound to, and the file:lines where that value is read, at the pinned versions (Kubernetes
${defaultFlagVersion}, etcd v3.6.8). For the kubelet and kube-proxy it also shows every field of their
config file: the line that declares it and where the running code reads it. The map is committed
data generated from the real source by harness/flags/analyzer.

  (no component)   coverage summary for every component
  <component>      one line per flag (and config field): name, how it is read, the best read site
  --flag NAME      only that flag, with its trace
  explain          registered here, bound to this field, read here, here and here
  verify           re-open every cited file:line in the module source (downloads modules with
                   "go mod download" if missing) and check it names the flag or the field;
                   prints "N citations, N verified, N failed", exits 1 on any failure
  prove            on the first control-plane (etcd: etcd) host: stop the unit, run the component's
                   debug build (-gcflags=all=-N -l) under delve with the unit's exact flags, a
                   tracepoint at every read site cited for each flag it passes, until it is healthy
                   and holds its Lease (etcd: every member healthy); kube-scheduler,
                   kube-controller-manager, etcd;
                   then report each flag hit (with the value delve read there), not hit (with the
                   condition guarding the site), or not provable, and start the unit again;
                   etcd with one member boots first: kube-apiserver, kube-controller-manager and
                   kube-scheduler stop, the data dir moves aside to /var/lib/etcd.hardwire-prove
                   and comes back afterwards (also on failure), a host without a default route
                   gets one through a bridge with no ports meanwhile, and etcd gets SIGTERM
                   after its gate, traced until it exits; a site the unit's own flags rule out (its condition
                   needs a flag the unit does not pass, or a comparison its value makes false)
                   is "off", counted apart; --reclassify re-derives the committed records'
                   statuses without a lab
  --kubernetes-version V
                   the Kubernetes release whose flag map the views, verify and --regenerate
                   use (default: the pinned release)
  --regenerate     rebuild core/flags/data/<version>/ with the Go analyzer (needs Go 1.26; fetches
                   modules through the Go module proxy into ~/.cache/hardwire/gomod); a release
                   with no module files under harness/flags/analyzer gets build lists made by
                   go mod tidy, its etcd being kubeadm's DefaultEtcdVersion at that tag
  --etcd V         etcd's map alone at an etcd no Kubernetes release pairs with (v3.6.16, the patch an
                   upgrade to etcd 3.7 passes through): --regenerate writes
                   core/flags/data/etcd/V.json and its gate table V.feature-gates.json,
                   verify checks the map's citations
  --json           one JSON document on stdout
`;

interface Opts {
  flag?: string;
  json?: boolean;
  kubernetesVersion: string;
  etcd?: string;
  regenerate?: boolean;
  quiet?: boolean;
}

export function declare(root: Cli): Cli {
  const flags = topCommand(
    root,
    'flags',
    'where each component flag is registered and where its value is read (with checked citations)',
    help,
  )
    .argument('[component]')
    .option('--flag <name>', 'only that flag, with its trace')
    .addOption(options.json())
    .option(
      '--kubernetes-version <version>',
      'Kubernetes release of the flag map',
      defaultFlagVersion,
    )
    .option('--regenerate', 'rebuild core/flags/data/<version>/ with the Go analyzer')
    .option(
      '--etcd <version>',
      "etcd's map alone at that etcd version (with --regenerate or verify)",
    )
    .addOption(options.quiet());
  renamed(flags, '--version', '--kubernetes-version', 'version');

  // `explain kube-apiserver --etcd-servers`: the flag to explain is itself written as a flag, so
  // explain takes options it does not know as its second argument (--flag NAME works too).
  flags
    .command('explain')
    .argument(
      '<component>',
      'name a component, e.g. hardwire flags explain kube-apiserver --etcd-servers',
    )
    .argument('[flag]')
    .allowUnknownOption()
    .action(
      act(async ({ opts }: Run<Opts>, component: string, flag: string | undefined) => {
        only(opts, 'explain');
        noEtcd(opts, 'flags explain');
        const name = flag ?? opts.flag;
        if (!name)
          throw new InputError(
            'flag',
            'missing; name one, e.g. hardwire flags explain kube-apiserver --etcd-servers',
          );
        const ex = explain(component, normalizeFlagName(name), opts.kubernetesVersion);
        if (opts.json)
          printJson({
            component: ex.component,
            kubernetesVersion: opts.kubernetesVersion,
            flag: ex.flag,
            best: bestCitation(component, name, opts.kubernetesVersion) ?? null,
          });
        else process.stdout.write(`${ex.lines.join('\n')}\n`);
        return 0;
      }),
    );

  flags.command('verify').action(
    act(async ({ opts, log }: Run<Opts>) => {
      only(opts, 'verify');
      if (opts.flag !== undefined)
        throw new InputError(
          '--flag',
          'does not apply to "flags verify"; it checks every citation',
        );
      const { verifyFlagMaps } = await import('../../harness/flags/verify.ts');
      const res = verifyFlagMaps(
        opts.etcd
          ? { maps: [(await import('../../core/flags/etcd-maps.ts')).loadEtcdMap(opts.etcd).map] }
          : { version: opts.kubernetesVersion },
      );
      for (const d of res.downloaded) log.info(`downloaded ${d}`);
      if (opts.json) printJson(res);
      else {
        for (const f of res.failures)
          process.stdout.write(
            `FAIL ${f.component} ${f.config ? `config field ${f.flag}` : `--${f.flag}`} ${f.role} ${f.site}: ${f.reason}\n`,
          );
        process.stdout.write(
          `${res.citations} citations, ${res.verified} verified, ${res.failed} failed (${res.configCitations} of them of config fields)\n`,
        );
      }
      return res.failed === 0 ? 0 : 1;
    }),
  );

  declareProve(flags);

  return flags.action(
    act(async ({ opts, log }: Run<Opts>, component: string | undefined) =>
      show(opts, log, component),
    ),
  );
}

/** --etcd names etcd's own map: --regenerate and verify take it, the views read a Kubernetes release's. */
function noEtcd(opts: Opts, what: string): void {
  if (opts.etcd !== undefined)
    throw new InputError(
      '--etcd',
      `does not apply to "${what}"; use it with --regenerate or verify (the views read --kubernetes-version's maps)`,
    );
}

/** --regenerate is an action of its own: not with explain or verify. */
function only(opts: Opts, sub: string): void {
  if (opts.regenerate)
    throw new InputError(
      '--regenerate',
      `does not apply to "flags ${sub}"; run "hardwire flags --regenerate" alone`,
    );
}

async function show(opts: Opts, log: Logger, component: string | undefined): Promise<number> {
  const version = opts.kubernetesVersion;
  if (opts.regenerate) {
    if (component !== undefined) throw new InputError('argv', '--regenerate takes no component');
    if (opts.etcd !== undefined) {
      const { regenerateEtcd } = await import('../../harness/flags/etcd-regenerate.ts');
      const res = regenerateEtcd({ version: opts.etcd, log });
      log.info(`wrote ${res.files.join(' and ')} in ${res.seconds.toFixed(1)}s`);
      return 0;
    }
    const { regenerate } = await import('../../harness/flags/regenerate.ts');
    log.info(
      "regenerating the flag map: this needs Go 1.26 and builds the analyzer against that release's modules",
    );
    const res = regenerate({ version, log });
    log.info(`wrote ${res.outDir} in ${res.seconds.toFixed(1)}s`);
    return 0;
  }

  noEtcd(opts, component ? `flags ${component}` : 'flags');
  if (!component) {
    if (opts.flag)
      throw new InputError(
        'flag',
        '--flag needs a component: hardwire flags <component> --flag NAME',
      );
    const maps = mappedComponents(version).map((c) => loadFlagMap(c, version));
    if (opts.json) {
      printJson({
        kubernetesVersion: version,
        components: maps.map((m) => ({
          component: m.component,
          componentVersion: m.componentVersion,
          coverage: m.coverage,
          ...(m.config ? { configCoverage: m.config.coverage } : {}),
          gaps: m.gaps,
        })),
      });
      return 0;
    }
    process.stdout.write(`flag map for Kubernetes ${version}\n`);
    process.stdout.write(
      'component                 flags  registered  read  validation-only  never-read\n',
    );
    for (const m of maps) {
      const c = m.coverage;
      process.stdout.write(
        `${m.component.padEnd(24)} ${String(c.flags).padStart(6)} ${String(c.registered).padStart(11)} ${String(c.withRead).padStart(5)} ${String(c.validationOnly).padStart(16)} ${String(c.neverRead + c.copyOnly).padStart(11)}\n`,
      );
    }
    return 0;
  }
  if (!isFlagComponent(component)) {
    throw new InputError(
      'component',
      `"${component}" has no flag map; expected one of ${flagComponents.join(', ')}`,
    );
  }
  const map = loadFlagMap(component, version);

  if (opts.flag) {
    const ex = explain(component, opts.flag, version);
    if (opts.json)
      printJson({
        component: map.component,
        kubernetesVersion: map.kubernetesVersion,
        componentVersion: map.componentVersion,
        flags: [ex.flag],
      });
    else process.stdout.write(`${ex.lines.join('\n')}\n`);
    return 0;
  }
  if (opts.json) {
    printJson(map);
    return 0;
  }
  const width = Math.max(...map.flags.map((f) => f.name.length)) + 2;
  // The "proven live" column: what `flags prove --record` saw (hardwire passes these flags only).
  const { provenCell } = await import('../../core/flags/proven.ts');
  const proven = map.flags.map((f) => provenCell(component, f.name, version));
  const pw = Math.max(...proven.map((p) => p.length)) + 1;
  map.flags.forEach((f, i) => {
    const best = bestCitation(component, f.name, version);
    const where = best?.kind === 'read' ? siteRef(best.site) : '-';
    process.stdout.write(
      `--${f.name.padEnd(width)} ${f.readBy.padEnd(15)} ${proven[i]!.padEnd(pw)} ${where}\n`,
    );
  });
  const c = map.coverage;
  process.stdout.write(
    `\n${c.flags} flags: ${c.withRead} read, ${c.validationOnly} validation-only, ${c.neverRead + c.copyOnly} never read, ${c.unregistered} without a registration\n`,
  );
  if (map.config) showConfig(map.config);
  return 0;
}

/** The config file's fields: key, how it is read, the best read site (else why none). */
function showConfig(cfg: ConfigSection): void {
  process.stdout.write(`\nconfig file fields (${cfg.type}, read as ${cfg.internalType}):\n`);
  const width = Math.max(...cfg.fields.map((f) => f.key.length)) + 2;
  for (const f of cfg.fields) {
    const read = f.consumedAt[0];
    process.stdout.write(
      `${f.key.padEnd(width)} ${f.readBy.padEnd(15)} ${read ? siteRef(read) : `- (${f.reason ?? 'no read site'})`}\n`,
    );
  }
  const c = cfg.coverage;
  process.stdout.write(
    `\n${c.fields} config fields: ${c.withRead} read, ${c.validationOnly} validation-only, ${c.copyOnly} only copied by generated code, ${c.neverRead} never read, ${c.noInternal} without an internal field\n`,
  );
}
