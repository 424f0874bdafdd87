// `hardwire flags`: where each component flag is registered and where its value is read.
import type { Command } from '../command.ts';
import { parse } from '../args.ts';
import { InputError } from '../../lib/errors.ts';
import { printJson } from '../../lib/log.ts';
import {
  bestCitation, defaultFlagVersion, explain, flagComponents, isFlagComponent, loadFlagMap, normalizeFlagName, siteRef,
} from '../../flags/map.ts';

const help = `
usage: hardwire flags [component] [--flag NAME] [--json] [--version V]
       hardwire flags explain <component> --<flag-name> [--json]
       hardwire flags verify [--json]
       hardwire flags --regenerate

Shows the flag map: for every flag of etcd, kube-apiserver, kube-controller-manager and
kube-scheduler, the file:line where it is registered, the Go field it is bound to, and the
file:lines where that value is read, at the pinned versions (Kubernetes ${defaultFlagVersion},
etcd v3.6.8). The map is committed data generated from the real source by flags/analyzer.

  (no component)   coverage summary for every component
  <component>      one line per flag: name, how it is read, the best read site
  --flag NAME      only that flag, with its trace
  explain          registered here, bound to this field, read here, here and here
  verify           re-open every cited file:line in the module source (downloads modules with
                   "go mod download" if missing) and check it names the flag or the field;
                   prints "N citations, N verified, N failed", exits 1 on any failure
  --regenerate     rebuild flags/data/<version>/ with the Go analyzer (needs Go 1.26; fetches
                   modules through the Go module proxy into ~/.cache/hardwire/gomod)
  --json           one JSON document on stdout
`;

async function run(ctx: Parameters<Command['run']>[0]): Promise<number> {
  const { argv, log } = ctx;
  if (argv[0] === 'explain') return runExplain(argv.slice(1));

  const { values, positionals } = parse(argv, {
    flag: { type: 'string' },
    json: { type: 'boolean' },
    version: { type: 'string' },
    regenerate: { type: 'boolean' },
    quiet: { type: 'boolean' },
  });
  const version = values.version ?? defaultFlagVersion;

  if (values.regenerate) {
    if (positionals.length > 0) throw new InputError('argv', '--regenerate takes no component');
    const { regenerate } = await import('../../flags/regenerate.ts');
    log.info('regenerating the flag map: this needs Go 1.26 and builds the analyzer against the pinned modules');
    const res = regenerate({ version, log });
    log.info(`wrote ${res.outDir} in ${res.seconds.toFixed(1)}s`);
    return 0;
  }

  if (positionals[0] === 'verify') {
    if (positionals.length > 1) throw new InputError('argv', 'verify takes no component');
    const { verifyFlagMaps } = await import('../../flags/verify.ts');
    const res = verifyFlagMaps({ version });
    for (const d of res.downloaded) log.info(`downloaded ${d}`);
    if (values.json) printJson(res);
    else {
      for (const f of res.failures) process.stdout.write(`FAIL ${f.component} --${f.flag} ${f.role} ${f.site}: ${f.reason}\n`);
      process.stdout.write(`${res.citations} citations, ${res.verified} verified, ${res.failed} failed\n`);
    }
    return res.failed === 0 ? 0 : 1;
  }

  if (positionals.length > 1) throw new InputError('argv', `expected at most one component, got ${positionals.join(' ')}`);
  const component = positionals[0];

  if (!component) {
    if (values.flag) throw new InputError('flag', '--flag needs a component: hardwire flags <component> --flag NAME');
    const maps = flagComponents.map((c) => loadFlagMap(c, version));
    if (values.json) {
      printJson({ kubernetesVersion: version, components: maps.map((m) => ({ component: m.component, componentVersion: m.componentVersion, coverage: m.coverage, gaps: m.gaps })) });
      return 0;
    }
    process.stdout.write(`flag map for Kubernetes ${version}\n`);
    process.stdout.write('component                 flags  registered  read  validation-only  never-read\n');
    for (const m of maps) {
      const c = m.coverage;
      process.stdout.write(`${m.component.padEnd(24)} ${String(c.flags).padStart(6)} ${String(c.registered).padStart(11)} ${String(c.withRead).padStart(5)} ${String(c.validationOnly).padStart(16)} ${String(c.neverRead + c.copyOnly).padStart(11)}\n`);
    }
    return 0;
  }
  if (!isFlagComponent(component)) {
    throw new InputError('component', `"${component}" has no flag map; expected one of ${flagComponents.join(', ')}`);
  }
  const map = loadFlagMap(component, version);

  if (values.flag) {
    const ex = explain(component, values.flag, version);
    if (values.json) printJson({ component: map.component, kubernetesVersion: map.kubernetesVersion, componentVersion: map.componentVersion, flags: [ex.flag] });
    else process.stdout.write(`${ex.lines.join('\n')}\n`);
    return 0;
  }
  if (values.json) {
    printJson(map);
    return 0;
  }
  const width = Math.max(...map.flags.map((f) => f.name.length)) + 2;
  for (const f of map.flags) {
    const best = bestCitation(component, f.name, version);
    const where = best?.kind === 'read' ? siteRef(best.site) : '-';
    process.stdout.write(`--${f.name.padEnd(width)} ${f.readBy.padEnd(15)} ${where}\n`);
  }
  const c = map.coverage;
  process.stdout.write(`\n${c.flags} flags: ${c.withRead} read, ${c.validationOnly} validation-only, ${c.neverRead + c.copyOnly} never read, ${c.unregistered} without a registration\n`);
  return 0;
}

function runExplain(argv: string[]): number {
  // `explain kube-apiserver --etcd-servers`: the flag to explain is itself written as a flag.
  let json = false;
  let version = defaultFlagVersion;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === '--json') json = true;
    else if (a === '--quiet') continue;
    else if (a === '--version') version = argv[++i] ?? '';
    else if (a === '--flag') rest.push(argv[++i] ?? '');
    else rest.push(a);
  }
  const [component, flag, ...extra] = rest;
  if (!component || !flag || extra.length > 0) {
    throw new InputError('argv', 'usage: hardwire flags explain <component> --<flag-name> (e.g. hardwire flags explain kube-apiserver --etcd-servers)');
  }
  const ex = explain(component, normalizeFlagName(flag), version);
  if (json) printJson({ component: ex.component, kubernetesVersion: version, flag: ex.flag, best: bestCitation(component, flag, version) ?? null });
  else process.stdout.write(`${ex.lines.join('\n')}\n`);
  return 0;
}

export const command: Command = {
  name: 'flags',
  summary: 'where each component flag is registered and where its value is read (with checked citations)',
  help,
  run,
};
