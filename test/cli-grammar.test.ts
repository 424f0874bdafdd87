// One grammar across the CLI (issue 40), checked on the real command tree: the commander tree that
// parses argv (cli/registry.ts declareAll), so a new command that breaks a rule fails here.
//   - --json is a boolean everywhere (one document on stdout);
//   - --md and --html take a FILE everywhere, checked before any work (a directory: one line);
//   - every command that connects to hosts (marked by hostOptions in cli/common.ts) takes
//     --accept-new-host-keys and --quiet, and --gate-timeout where it gates; the marked set is
//     asserted against the list below, and every command that reads an inventory is either marked
//     or listed as reading the file only;
//   - every --inventory is the same option (flags, description, no default value: the lab's);
//   - one name per meaning: options shared by several commands are the same kind (a value or a
//     boolean) and match the meaning declared here; the old spellings are hidden hints only.
import { describe, expect, it } from 'vitest';
import type { Option } from 'commander';
import { rootCli, type Cli } from '../cli/command.ts';
import { declareAll } from '../cli/registry.ts';
import { INVENTORY_DESCRIPTION } from '../cli/common.ts';
import { DEFAULT_GATE_TIMEOUT_MS } from '../lib/constants.ts';

interface Node {
  path: string;
  cmd: Cli;
  own: readonly Option[];
  all: readonly Option[];
}

/** Every command with its own options and those in scope from the commands above it. */
async function tree(): Promise<Node[]> {
  const out: Node[] = [];
  const walk = (cmd: Cli, above: string[], inherited: readonly Option[]): void => {
    const path = [...above, cmd.name()];
    const all = [...inherited, ...cmd.options];
    out.push({ path: path.join(' '), cmd, own: cmd.options, all });
    for (const sub of cmd.commands as Cli[]) walk(sub, path, all);
  };
  for (const cmd of await declareAll(rootCli())) walk(cmd, [], []);
  return out;
}

const visible = (o: Option) => !(o as Option & { hidden: boolean }).hidden;
const takesValue = (o: Option) => o.required || o.optional;

/** Commands that connect to an inventory's hosts; true: they also wait on gates. */
const CONNECTS: Record<string, boolean> = {
  preflight: false,
  wire: true,
  verify: true,
  teardown: false,
  rollback: true,
  'certs check': false,
  'certs renew': true,
  'etcd snapshot save': false,
  'etcd snapshot restore': true,
  'drill cert-expiry': true,
  'drill cert-mistake': true,
  'drill apiserver-down': true,
  'drill kill-one': true,
  'drill lose-host': true,
  'drill webhook-cabundle': true,
  'drill conversion-webhook': true,
  'drill apf-starve': true,
  compare: true,
  cis: true,
  'flags prove': true,
  'upgrade plan': true,
  'upgrade apply': true,
  // Its one wait is the debug apiserver's start (--ready-timeout), not a gate of wire's.
  'trace apply': false,
  audit: false,
  'encryption rotate': true,
  // They read the registry's catalog on its host, or push into it through the SSH connection; no gate.
  images: false,
  'images add': false,
  // --live waits for its debug apiserver's start, not for a gate of wire's (as trace apply).
  learn: false,
};

/** Commands that take --inventory and only read the file (or the lab's): no host is contacted. */
const READS_INVENTORY_ONLY = [
  'pki',
  'render',
  'kubeconfig',
  'etcd snapshot list',
  'drill list',
  'certs',
  'drill',
  'etcd',
  'etcd snapshot',
  'encryption',
];

/** --inventory means something else here: the versions and components.from to build with (no default). */
const INVENTORY_FOR_VERSIONS = ['components build', 'components fetch'];

/** The meaning of every option name more than one command takes: each description must say it. */
const MEANING: Record<string, RegExp> = {
  '--inventory': /^(an )?inventory file/,
  '--state-dir': /^operator state directory/,
  '--json': /^one JSON document on stdout$/,
  '--quiet': /^no progress lines$/,
  '--dry-run': /change nothing on any host/,
  '--accept-new-host-keys': /^trust unknown host keys on first contact$/,
  '--gate-timeout': /^how long each gate waits$/,
  '--md': /as Markdown to FILE$/,
  '--html': /as one self-contained HTML file$/,
  '--keep-labs': /lab.* up/,
  '--kubeadm-lab': /^lab for the kubeadm plane/,
  '--k0s-lab': /lab .*k0s/,
  '--plane': /hardwire.* k0s/,
  '--host': /the (hardwire|control-plane) host/,
  '--observe-timeout': /^how long to wait for the failure/,
  '--keep-broken': /^stop after the break/,
  '--hold': /broken this long/,
  '--to': /^target Kubernetes version/,
  '--etcd-to': /^target etcd version/,
  '--upgrade-to': /^the upgrade plan to VERSION/,
  '--name': /^lab name/,
  '--force': /./,
  '--kubernetes-version': /^Kubernetes release/,
  '--source': /source archive/,
  '--listen': /IPv4 address of this machine/,
  '--version': /^the named binaries' own version/,
  '--from': /^use binaries from DIR/,
  '--arch': /^the architecture to build for/,
  '--demo': /^run the commands as typed, then check$/,
  '--check': /^read the cluster for the result$/,
  '--live': /^with --demo: run it against a debug kube-apiserver under delve/,
};

/** Names that still carry two meanings, left for a later change: any new one fails. */
const TWO_MEANINGS_LEFT: Record<string, string> = {};

/** Old spellings: hidden under these commands (every one, for ''), and a one-line hint to the new name when used. */
const RENAMED: Record<string, { under: string; now: string }> = {
  '--keep-lab': { under: '', now: '--keep-labs' },
  // `flags --etcd` keeps its name: there it is the etcd version of a flag map.
  '--etcd': { under: 'upgrade', now: '--etcd-to' },
  // flags' map version is a Kubernetes release, as components' --kubernetes-version is.
  '--version': { under: 'flags', now: '--kubernetes-version' },
  // lab up restores what lab save kept; components build/fetch --from is a directory of binaries.
  '--from': { under: 'lab up', now: '--saved' },
  // audit --upgrade-to means what compare's did: the upgrade plan to VERSION.
  '--upgrade': { under: 'compare', now: '--upgrade-to' },
};

describe('one grammar across the CLI', () => {
  it('--json is a boolean everywhere: one document on stdout', async () => {
    const bad = (await tree()).flatMap((n) =>
      n.own.filter((o) => o.long === '--json' && (takesValue(o) || o.negate)).map(() => n.path),
    );
    expect(bad, 'commands whose --json takes a value').toEqual([]);
  });

  it('--md and --html take a FILE everywhere, refused in one line when it is a directory or its directory is missing', async () => {
    const reports = (await tree()).flatMap((n) =>
      n.own
        .filter((o) => o.long === '--md' || o.long === '--html')
        .map((o) => ({ path: n.path, o })),
    );
    expect(reports.length).toBeGreaterThan(10);
    expect(
      reports.filter(({ o }) => !o.required).map(({ path, o }) => `${path} ${o.long}`),
      'a report option that takes no FILE',
    ).toEqual([]);
    for (const { path, o } of reports) {
      expect(() => o.parseArg!('/tmp', undefined), `${path} ${o.long} /tmp`).toThrow(
        new RegExp(`^${o.long}: /tmp is a directory; name a file`),
      );
      expect(() => o.parseArg!('/no-such-dir/r.out', undefined), `${path} ${o.long}`).toThrow(
        new RegExp(`^${o.long}: /no-such-dir does not exist`),
      );
    }
  });

  it('the commands that connect to hosts are the ones listed, marked by hostOptions', async () => {
    const marked = Object.fromEntries(
      (await tree()).filter((n) => n.cmd.connects).map((n) => [n.path, n.cmd.connects!.gates]),
    );
    expect(marked).toEqual(CONNECTS);
  });

  it('every command that connects to hosts takes the same connection options; one that gates, --gate-timeout', async () => {
    const problems: string[] = [];
    for (const n of (await tree()).filter((x) => x.cmd.connects)) {
      const has = (flag: string) => n.own.find((o) => o.long === flag);
      for (const flag of ['--accept-new-host-keys', '--quiet'])
        if (!has(flag)) problems.push(`${n.path}: no ${flag}`);
      const gt = has('--gate-timeout');
      if (n.cmd.connects!.gates && !gt) problems.push(`${n.path}: gates, but no --gate-timeout`);
      if (!n.cmd.connects!.gates && gt) problems.push(`${n.path}: no gate, yet --gate-timeout`);
      if (gt && (gt.defaultValue !== DEFAULT_GATE_TIMEOUT_MS / 1000 || !gt.required))
        problems.push(`${n.path}: --gate-timeout is not the shared one`);
    }
    expect(problems).toEqual([]);
  });

  it('every command that reads an inventory either connects (and is marked) or is listed as reading the file only', async () => {
    const nodes = await tree();
    const withInventory = nodes
      .filter((n) => n.all.some((o) => o.long === '--inventory'))
      .map((n) => n.path);
    const unclassified = withInventory.filter(
      (p) =>
        !(p in CONNECTS) &&
        !READS_INVENTORY_ONLY.includes(p) &&
        !INVENTORY_FOR_VERSIONS.includes(p),
    );
    expect(
      unclassified,
      'take --inventory: add to CONNECTS (hostOptions) or READS_INVENTORY_ONLY',
    ).toEqual([]);
    // Every connecting command reads an inventory.
    expect(Object.keys(CONNECTS).filter((p) => !withInventory.includes(p))).toEqual([]);
  });

  it("every --inventory is the same option: -i, --inventory <file>, the lab's by default", async () => {
    const all = (await tree()).flatMap((n) =>
      n.own.filter((o) => o.long === '--inventory').map((o) => ({ path: n.path, o })),
    );
    expect(all.length).toBeGreaterThan(10);
    const odd = all.filter(
      ({ path, o }) =>
        o.flags !== '-i, --inventory <file>' ||
        o.defaultValue !== undefined ||
        (INVENTORY_FOR_VERSIONS.includes(path)
          ? o.description === INVENTORY_DESCRIPTION
          : o.description !== INVENTORY_DESCRIPTION),
    );
    expect(odd.map(({ path, o }) => `${path}: ${o.flags} "${o.description}"`)).toEqual([]);
  });

  it('one name per meaning: a shared option name is one kind and one meaning; old spellings are hidden hints', async () => {
    const byName = new Map<string, { path: string; o: Option }[]>();
    for (const n of await tree())
      for (const o of n.own.filter(visible))
        byName.set(o.long!, [...(byName.get(o.long!) ?? []), { path: n.path, o }]);
    const problems: string[] = [];
    const twoMeanings: string[] = [];
    for (const [name, uses] of byName) {
      const old = RENAMED[name];
      for (const u of uses)
        if (old && (u.path === old.under || u.path.startsWith(`${old.under} `) || old.under === ''))
          problems.push(`${u.path} ${name} is visible; it was renamed ${old.now}`);
      if (uses.length < 2) continue;
      if (new Set(uses.map((u) => takesValue(u.o))).size > 1)
        problems.push(`${name}: a value on some commands, a boolean on others`);
      if (name in TWO_MEANINGS_LEFT) {
        twoMeanings.push(name);
        continue;
      }
      const meaning = MEANING[name];
      if (!meaning) {
        problems.push(
          `${name} is on ${uses.map((u) => u.path).join(', ')}: declare its one meaning in MEANING`,
        );
        continue;
      }
      for (const u of uses)
        if (!meaning.test(u.o.description))
          problems.push(`${u.path} ${name}: "${u.o.description}" is not ${meaning}`);
    }
    expect(problems).toEqual([]);
    expect(twoMeanings.sort()).toEqual(Object.keys(TWO_MEANINGS_LEFT).sort());
  });

  it('the old spellings (--keep-lab, --etcd on upgrade, --version on flags, --from on lab up, --upgrade on compare) give one line naming the new one', async () => {
    const hidden = (await tree()).flatMap((n) =>
      n.own.filter((o) => !visible(o)).map((o) => `${n.path} ${o.long}`),
    );
    expect(hidden.sort()).toEqual([
      'compare --upgrade',
      'drill kill-one --keep-lab',
      'flags --version',
      'lab up --from',
      'upgrade apply --etcd',
      'upgrade plan --etcd',
    ]);
    const { hardwire } = await import('./helpers/cli.ts');
    const r = hardwire([
      'upgrade',
      'plan',
      '--to',
      'v1.37.2',
      '--etcd',
      'v3.7.0',
      '--offline',
      '--inventory',
      'hosts/example.yaml',
    ]);
    expect([r.code, r.stdout, r.stderr]).toEqual([
      2,
      '',
      'error: --etcd: is now --etcd-to (one name per meaning across the CLI); use --etcd-to VERSION\n',
    ]);
    const k = hardwire(['drill', 'kill-one', '--keep-lab']);
    expect([k.code, k.stderr]).toEqual([
      2,
      'error: --keep-lab: is now --keep-labs (one name per meaning across the CLI); use --keep-labs\n',
    ]);
    const f = hardwire(['flags', '--version', 'v1.37.2']);
    expect([f.code, f.stdout, f.stderr]).toEqual([
      2,
      '',
      'error: --version: is now --kubernetes-version (one name per meaning across the CLI); use --kubernetes-version VERSION\n',
    ]);
    const l = hardwire(['lab', 'up', '--from', 'wired', '--name', 'no-such-lab']);
    expect([l.code, l.stdout, l.stderr]).toEqual([
      2,
      '',
      'error: --from: is now --saved (one name per meaning across the CLI); use --saved NAME\n',
    ]);
    // No host or lab is touched: the hint comes while the options are parsed.
    const c = hardwire(['compare', '--upgrade', 'v1.37.2', '--inventory', 'hosts/no-such.yaml']);
    expect([c.code, c.stdout, c.stderr]).toEqual([
      2,
      '',
      'error: --upgrade: is now --upgrade-to (one name per meaning across the CLI); use --upgrade-to VERSION\n',
    ]);
  });

  it('drill list names every drill with its curriculum ids, and an id runs its drill', async () => {
    const drill = (await tree()).find((n) => n.path === 'drill')!.cmd;
    const drills = (drill.commands as Cli[]).filter((c) => c.name() !== 'list');
    const { NO_CURRICULUM_ID } = await import('../cli/commands/drill.ts');
    for (const c of drills) {
      // A drill without a curriculum id is one named in NO_CURRICULUM_ID, with why.
      const ids = Object.hasOwn(NO_CURRICULUM_ID, c.name()) ? [c.name()] : c.aliases();
      if (ids === c.aliases())
        expect(c.aliases().length, `${c.name()} has a curriculum id`).toBeGreaterThan(0);
      else expect(c.aliases(), `${c.name()} has no curriculum id`).toEqual([]);
      expect(
        c.summary().startsWith(ids.join(' and ')),
        `${c.name()}'s summary starts with its ids`,
      ).toBe(true);
    }
    const { hardwire } = await import('./helpers/cli.ts');
    const r = hardwire(['drill', 'list', '--json']);
    expect(r.code).toBe(0);
    const listed = (JSON.parse(r.stdout) as { drills: { ids: string[]; name: string }[] }).drills;
    expect(listed.map((d) => d.name).sort()).toEqual(drills.map((c) => c.name()).sort());
    for (const id of ['3.C1', '3.C2', '3.C3', '3.C4', '3.C5', '3.6'])
      expect(
        listed.some((d) => d.ids.includes(id)),
        id,
      ).toBe(true);
    // By id, the same command: its help, and its parse errors name it.
    expect(hardwire(['drill', '3.C5', '--help']).stdout).toBe(
      hardwire(['drill', 'cert-expiry', '--help']).stdout,
    );
    const bad = hardwire(['drill', '3.C5', '--mode', 'nope']);
    expect([bad.code, bad.stderr]).toEqual([
      2,
      'error: --mode: "nope" is not one of window, expired\n',
    ]);
  });

  it('help that lists components, steps or certificates comes from the registry', async () => {
    const { hardwire } = await import('./helpers/cli.ts');
    const wire = hardwire(['wire', '--help']).stdout;
    for (const c of ['etcd', 'kube-apiserver', 'kube-vip', 'containerd', 'kubelet and kube-proxy'])
      expect(wire).toContain(`Start or restart ${c}`);
    expect(hardwire(['teardown', '--help']).stdout).toContain(
      'kube-proxy, kubelet, registry, containerd, kube-scheduler, kube-controller-manager, kube-vip, kube-apiserver, etcd',
    );
    for (const id of ['kubelet-server', 'kubeconfig-kubelet', 'kubeconfig-kube-proxy'])
      expect(hardwire(['pki', '--help']).stdout).toContain(id);
    for (const name of ['kubelet-server', 'kubelet.conf', 'kube-proxy.conf'])
      expect(hardwire(['certs', '--help']).stdout).toContain(name);
  });

  it('a reader that closes the pipe early (| head) ends the command quietly, exit 0, no stack trace', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['cli/hardwire.ts', 'flags', 'kube-apiserver'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((done) => child.on('close', (c) => done(c)));
    expect([code, stderr]).toEqual([0, '']);
  }, 60_000);
});
