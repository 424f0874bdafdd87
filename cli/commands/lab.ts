// hardwire lab up|down|status|ssh|stop|start|cut|heal: local systemd containers that behave like small VMs.
import { act, group, topCommand, type Cli, type Run } from '../command.ts';
import { options, renamed, stateDirFrom, wholeNumber } from '../common.ts';
import { InputError } from '../../lib/errors.ts';
import { printJson, type Logger } from '../../lib/log.ts';
import { shJoin } from '../../lib/quote.ts';
import type { LabHostInfo, LabInfo } from '../../harness/lab/index.ts';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEFAULT_GATE_TIMEOUT_MS } from '../../lib/constants.ts';
import type * as LabModule from '../../harness/lab/index.ts';
import type { LabShape } from '../../harness/lab/snapshot.ts';

const help = `
usage: hardwire lab up|down|status|ssh|stop|start|cut|heal|save [host|snapshot] [options]

Runs lab hosts on this machine: Debian 12 containers (systemd-nspawn) with systemd as PID 1,
sshd, and their own address on a bridge in 10.213.<n>.0/24 (n derived from the lab name).
Needs root, systemd-container and debootstrap (apt-get install -y systemd-container debootstrap).

  up                 create the lab or repair it (boot stopped hosts, heal cut ones), wait until every
                     host runs systemd and answers SSH, write its inventory and print the path.
                     The first run builds a Debian base rootfs (about a minute, cached).
  down               remove the lab: containers, veths, bridge, host disks, keys, state
  status             each host: running, address, whether SSH answers (exit 1 unless all are up)
  ssh <host> [-- cmd...]   open a shell (or run cmd through the host's shell, as ssh does) as root on a lab host, host key pinned
  stop <host>        power the host off; its disk stays
  start <host>       boot a stopped host again
  cut <host>         cut the host's network (SSH to it times out)
  heal <host>        restore a cut host's network
  save <snapshot>    power the lab off, keep a copy of its hosts' disks and its cluster state
                     ($HARDWIRE_STATE/<lab name>) under ~/.cache/hardwire/lab-saves/<snapshot>, boot it again
  up --saved <name>
                     replace the lab with that copy, boot it, and run wire as the gate (it changes
                     nothing and waits for every gate): a clean wired cluster back in seconds, after a
                     drill. Refused when the snapshot was made by other code, binaries or rootfs.

options:
  --name NAME    lab name (default "lab"); its files live in $HARDWIRE_STATE/lab/NAME/
  --hosts N      number of hosts for up (default 3, or the existing lab's count)
  --inner N      for up: the last N hosts sit on an inner network (10.213.255.0/24) that this machine
                 cannot reach, behind node1 as bastion; their inventory entries get
                 ssh.proxyJump: root@<node1's address> and the etcd role only (default 0)
  --workers      for up: every host can run containerd, runc and a kubelet: its own cgroups on this
                 machine, all capabilities, runc's keyring syscalls, containerd's and the kubelet's
                 state on this machine's disk, and hardwire-node-prepare.service inside
                 (docs/workers-spike.md); down removes the cgroups. Its inventory makes each
                 host a worker too. The default for the built-in lab "lab"; --no-workers: not
  --dedicated-workers N
                 for up, with --workers: the last N hosts are workers only (no etcd, no control
                 plane), the others etcd + control plane with no kubelet, as compare's hardwire
                 plane runs (node1 its control plane, node2 its worker); default 0
  --vm-workers N for up: N more hosts, vm1..vmN at .50 and up, each a QEMU VM (2 vCPUs, 3 GiB) with
                 Debian's kernel and the containers' Debian base as an ext4 disk, a tap on the lab
                 bridge and its own pinned host key; workers only. KVM when the CPU offers it,
                 TCG otherwise (here: about 40 s to boot; docs/lab.md). Not kept by "lab save"
  --arm64-workers N
                 for up: N more hosts, arm1..armN at .60 and up, each a container whose whole
                 userland is Debian arm64, run by qemu-user through binfmt_misc (uname -m says
                 aarch64); workers in the inventory, for preflight and wire --dry-run only: a
                 kubelet cannot run under qemu-user. Needs qemu-user-static and binfmt-support;
                 the first run builds an arm64 base rootfs (minutes, cached). Not kept by "lab save"
  --json         print one JSON document on stdout (up, down, status, stop, start, cut, heal)
  --quiet        no progress lines

environment:
  HARDWIRE_STATE   state root (default .hardwire)
  HARDWIRE_CACHE   cache root for the base rootfs (default ~/.cache/hardwire)
`;

interface Opts {
  name?: string;
  json?: boolean;
  quiet?: boolean;
}

type Lab = typeof LabModule;

/** Imported only when a lab subcommand runs, so that listing commands does not load ssh2 and the lab. */
const loadLab = (): Promise<Lab> => import('../../harness/lab/index.ts');

export function declare(root: Cli): Cli {
  const lab = topCommand(
    root,
    'lab',
    'local lab hosts: systemd containers with SSH (up, down, status, ssh, stop/start, cut/heal)',
    help,
  )
    .option('--name <name>', 'lab name (default "lab")')
    .addOption(options.json())
    .addOption(options.quiet());
  const labOpts = (opts: Opts, log: Logger) => ({
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    log,
  });

  renamed(lab.command('up'), '--from', '--saved', 'name')
    .option('--hosts <n>', 'number of hosts', wholeNumber('--hosts'))
    .option(
      '--inner <n>',
      'how many of the last hosts sit on the inner network, behind node1',
      wholeNumber('--inner'),
    )
    .option(
      '--workers',
      'hosts that can run containerd, runc and a kubelet (the default for the built-in lab "lab")',
    )
    .option('--no-workers', 'control-plane hosts only')
    .option(
      '--dedicated-workers <n>',
      'with --workers: the last N hosts are workers only, the others etcd + control plane',
      wholeNumber('--dedicated-workers'),
    )
    .option(
      '--vm-workers <n>',
      'N more hosts that are QEMU VMs (KVM if usable, else TCG), workers only: their own kernel, cgroup v2',
      wholeNumber('--vm-workers'),
    )
    .option(
      '--arm64-workers <n>',
      'N more hosts that are arm64 containers under qemu-user, workers for planning only (never wired)',
      wholeNumber('--arm64-workers'),
    )
    .option(
      '--saved <name>',
      'replace the lab with a copy made by "lab save", then wire it as the gate',
    )
    .addOption(options.stateDir())
    .action(
      act(
        async ({
          opts,
          log,
        }: Run<
          Opts & {
            hosts?: number;
            inner?: number;
            workers?: boolean;
            dedicatedWorkers?: number;
            vmWorkers?: number;
            arm64Workers?: number;
            saved?: string;
            stateDir?: string;
          }
        >) => {
          if (opts.saved !== undefined)
            return upFrom(
              await loadLab(),
              labOpts(opts, log),
              opts.saved,
              stateDirFrom(opts),
              opts.json === true,
              log,
            );
          const counts = {
            ...(opts.hosts !== undefined ? { hosts: opts.hosts } : {}),
            ...(opts.inner !== undefined ? { inner: opts.inner } : {}),
            ...(opts.workers !== undefined ? { workers: opts.workers } : {}),
            ...(opts.dedicatedWorkers !== undefined
              ? { dedicatedWorkers: opts.dedicatedWorkers }
              : {}),
            ...(opts.vmWorkers !== undefined ? { vmWorkers: opts.vmWorkers } : {}),
            ...(opts.arm64Workers !== undefined ? { arm64Workers: opts.arm64Workers } : {}),
          };
          const info = await (await loadLab()).labUp({ ...labOpts(opts, log), ...counts });
          if (opts.json)
            printJson({
              name: info.name,
              inventory: info.inventory,
              hosts: info.hosts.map(({ name, address, ssh, jump }) => ({
                name,
                address,
                ssh,
                ...(jump ? { proxyJump: `root@${jump}` } : {}),
              })),
            });
          else process.stdout.write(`${info.inventory}\n`);
          return 0;
        },
      ),
    );

  lab.command('down').action(
    act(async ({ opts, log }: Run<Opts>) => {
      const r = await (await loadLab()).labDown(labOpts(opts, log));
      if (opts.json) printJson(r);
      else if (!r.existed) log.info(`no lab "${r.name}"; nothing to remove`);
      return 0;
    }),
  );

  lab.command('status').action(
    act(async ({ opts, log }: Run<Opts>) => {
      const info = await (await loadLab()).labStatus(labOpts(opts, log));
      if (opts.json) {
        printJson({
          name: info.name,
          inventory: info.inventory,
          hosts: info.hosts.map(({ name, address, ssh, running }) => ({
            name,
            address,
            ssh,
            running,
          })),
        });
      } else {
        const w = Math.max(4, ...info.hosts.map((h) => h.name.length));
        process.stdout.write(`lab ${info.name}  inventory ${info.inventory}\n`);
        process.stdout.write(`${'HOST'.padEnd(w)}  ADDRESS        RUNNING  SSH\n`);
        for (const h of info.hosts)
          process.stdout.write(
            `${h.name.padEnd(w)}  ${h.address.padEnd(13)}  ${(h.running ? 'yes' : 'no').padEnd(7)}  ${h.ssh ? 'yes' : 'no'}\n`,
          );
      }
      return info.hosts.every((h) => h.running && h.ssh) ? 0 : 1;
    }),
  );

  lab
    .command('ssh')
    .argument('<host>', '"lab ssh" needs a host name, e.g. hardwire lab ssh node1')
    .argument('[cmd...]')
    .action(
      act(async ({ opts, log }: Run<Opts>, host: string, cmd: string[]) =>
        sshInto(await loadLab(), labOpts(opts, log), host, cmd),
      ),
    );

  lab
    .command('save')
    .argument('<snapshot>', '"lab save" needs a snapshot name, e.g. hardwire lab save clean')
    .addOption(options.stateDir())
    .action(
      act(async ({ opts, log }: Run<Opts & { stateDir?: string }>, snapshot: string) => {
        const snap = await import('../../harness/lab/snapshot.ts');
        const l = await loadLab();
        const o = labOpts(opts, log);
        const dest = snap.savedSnapshotDir(snapshot);
        const shape = snap.existingShape(o);
        const stateDir = stateDirFrom(opts);
        const clusterDir = join(stateDir, shape.name);
        const wired = existsSync(clusterDir);
        const { loadValidInventory } = await import('../../core/validate/inventory.ts');
        const binaries = await snap.cacheFilesInUse(
          loadValidInventory(l.labPaths(o).inventory),
          log,
        );
        const meta = await snap.saveLabSnapshot({
          ...o,
          dest,
          inputs: snap.currentInputs(shape, l.rootfsDir()),
          binaries,
          ...(wired ? { clusterDir } : {}),
        });
        const info = await l.labUp(o);
        // Back as it was: serving, every gate passed (a wire that changes nothing).
        if (wired) await gateByWire(info, stateDir, log);
        if (opts.json)
          printJson({
            name: shape.name,
            snapshot,
            dir: dest,
            bytes: meta.bytes,
            clusterDir: meta.clusterDir,
          });
        else process.stdout.write(`${dest}\n`);
        return 0;
      }),
    );

  for (const action of ['stop', 'start', 'cut', 'heal'] as const) {
    lab
      .command(action)
      .argument('<host>', `"lab ${action}" needs a host name, e.g. hardwire lab ${action} node1`)
      .action(
        act(async ({ opts, log }: Run<Opts>, host: string) => {
          const l = await loadLab();
          const fn = { stop: l.labStop, start: l.labStart, cut: l.labCut, heal: l.labHeal }[action];
          await fn(host, labOpts(opts, log));
          if (opts.json) printJson({ name: opts.name ?? l.DEFAULT_LAB_NAME, host, action });
          else log.info(`${action}: ${host} done`);
          return 0;
        }),
      );
  }

  return group(lab);
}

/**
 * OpenSSH's argv for a lab host: the lab key and the lab known_hosts (strict checking), on both hops
 * for an inner host. `cmd` goes last as ssh takes it: joined with spaces and run by the host's shell,
 * so `-- 'ls -l /'` and `-- ls -l /` both run ls (quoting it as one argv made "ls -l /" a program name).
 */
export function labSshArgv(
  info: Pick<LabInfo, 'identityFile' | 'knownHosts'>,
  h: Pick<LabHostInfo, 'address' | 'jump'>,
  cmd: readonly string[],
): string[] {
  const pinned = [
    '-i',
    info.identityFile,
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    `UserKnownHostsFile="${info.knownHosts}"`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-o',
    'StrictHostKeyChecking=yes',
    '-l',
    'root',
  ];
  // Not -J: options given on the command line do not reach the jump connection, so its host key would go unpinned.
  const jump = h.jump
    ? ['-o', `ProxyCommand=${shJoin(['ssh', ...pinned, '-W', '%h:%p', h.jump])}`]
    : [];
  return [...pinned, ...jump, h.address, ...(cmd.length > 0 ? ['--', ...cmd] : [])];
}

/** A wire of the lab's inventory as the gate: on a lab that is what wire made, it changes nothing and waits for every gate. */
async function gateByWire(
  info: LabInfo,
  stateDir: string,
  log: Logger,
): Promise<{ changed: number; restarted: number }> {
  const { loadValidInventory } = await import('../../core/validate/inventory.ts');
  const { wire } = await import('../../core/apply/wire.ts');
  const ctx = await wire(
    loadValidInventory(info.inventory),
    stateDir,
    {
      dryRun: false,
      verifyHashes: false,
      acceptNewHostKeys: false,
      gateTimeoutMs: DEFAULT_GATE_TIMEOUT_MS,
    },
    log,
  );
  return {
    changed: ctx.plan?.hosts.reduce((n, h) => n + h.changes.length, 0) ?? 0,
    restarted: ctx.restarted.length,
  };
}

/** `lab up --saved`: the snapshot restored, then wire as its gate (a no-op on a current snapshot). */
async function upFrom(
  l: Lab,
  o: { name?: string; log: Logger },
  snapshot: string,
  stateDir: string,
  json: boolean,
  log: Logger,
): Promise<number> {
  const snap = await import('../../harness/lab/snapshot.ts');
  const src = snap.savedSnapshotDir(snapshot);
  const meta = snap.readSnapshotMeta(src);
  if (!meta)
    throw new InputError(
      '--saved',
      `no snapshot "${snapshot}" in ${dirname(src)}; make one with: hardwire lab save ${snapshot}`,
    );
  const shape = JSON.parse(meta.inputs.shape) as LabShape;
  if (o.name !== undefined && o.name !== shape.name)
    throw new InputError(
      '--name',
      `snapshot "${snapshot}" is of lab "${shape.name}"; restore it with --name ${shape.name}`,
    );
  if (meta.clusterDir && meta.clusterDir !== join(stateDir, shape.name)) {
    throw new InputError(
      '--state-dir',
      `snapshot "${snapshot}" holds the cluster state of ${meta.clusterDir}; pass --state-dir ${dirname(meta.clusterDir)}`,
    );
  }
  const { info } = await snap.restoreLabSnapshot({
    ...o,
    name: shape.name,
    src,
    inputs: snap.currentInputs(shape, l.rootfsDir()),
  });
  // Hosts saved before any wire: no cluster state to gate (a wire here would make a new PKI).
  if (!meta.clusterDir) {
    if (json) printJson({ name: info.name, inventory: info.inventory, snapshot, wired: false });
    else process.stdout.write(`${info.inventory}\n`);
    return 0;
  }
  const { changed, restarted } = await gateByWire(info, stateDir, log);
  if (json)
    printJson({
      name: info.name,
      inventory: info.inventory,
      snapshot,
      wired: true,
      changedFiles: changed,
      restarted,
    });
  else {
    log.info(
      `lab "${info.name}" restored from "${snapshot}"; wire changed ${changed} file(s), (re)started ${restarted} unit(s)`,
    );
    process.stdout.write(`${info.inventory}\n`);
  }
  return 0;
}

/** Hands the terminal to OpenSSH (labSshArgv). */
async function sshInto(
  lab: Lab,
  opts: { name?: string },
  host: string,
  cmd: string[],
): Promise<number> {
  const info = await lab.labStatus(opts);
  const h = info.hosts.find((x) => x.name === host);
  if (!h)
    throw new InputError(
      'host',
      `no host "${host}" in lab "${info.name}"; hosts are ${info.hosts.map((x) => x.name).join(', ')}`,
    );
  const { run } = await import('../../lib/proc.ts');
  // The terminal is ssh's; its exit code (the remote command's) is ours.
  return (
    await run('ssh', labSshArgv(info, h, cmd), {
      step: 'lab ssh',
      host,
      inherit: true,
      allowFail: true,
      hint: 'install openssh-client',
    })
  ).code;
}
