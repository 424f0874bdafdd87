// hardwire lab up|down|status|ssh|stop|start|cut|heal: local systemd containers that behave like small VMs.
import { spawn } from 'node:child_process';
import type { Command } from '../command.ts';
import { parse } from '../args.ts';
import { InputError } from '../../lib/errors.ts';
import { printJson } from '../../lib/log.ts';

const help = `
usage: hardwire lab up|down|status|ssh|stop|start|cut|heal [host] [options]

Runs lab hosts on this machine: Debian 12 containers (systemd-nspawn) with systemd as PID 1,
sshd, and their own address on a bridge in 10.213.<n>.0/24 (n derived from the lab name).
Needs root, systemd-container and debootstrap (apt-get install -y systemd-container debootstrap).

  up                 create the lab or repair it (boot stopped hosts, heal cut ones), wait until every
                     host runs systemd and answers SSH, write its inventory and print the path.
                     The first run builds a Debian base rootfs (about a minute, cached).
  down               remove the lab: containers, veths, bridge, host disks, keys, state
  status             each host: running, address, whether SSH answers (exit 1 unless all are up)
  ssh <host> [-- cmd...]   open a shell (or run cmd) as root on a lab host, host key pinned
  stop <host>        power the host off; its disk stays
  start <host>       boot a stopped host again
  cut <host>         cut the host's network (SSH to it times out)
  heal <host>        restore a cut host's network

options:
  --name NAME    lab name (default "lab"); its files live in $HARDWIRE_STATE/lab/NAME/
  --hosts N      number of hosts for up (default 3, or the existing lab's count)
  --json         print one JSON document on stdout (up, down, status, stop, start, cut, heal)
  --quiet        no progress lines

environment:
  HARDWIRE_STATE   state root (default .hardwire)
  HARDWIRE_CACHE   cache root for the base rootfs (default ~/.cache/hardwire)
`;

const ACTIONS = ['up', 'down', 'status', 'ssh', 'stop', 'start', 'cut', 'heal'] as const;
type Action = (typeof ACTIONS)[number];

function hostArg(action: string, rest: string[]): string {
  const host = rest[0];
  if (!host) throw new InputError('host', `"lab ${action}" needs a host name, e.g. hardwire lab ${action} node1`);
  return host;
}

export const command: Command = {
  name: 'lab',
  summary: 'local lab hosts: systemd containers with SSH (up, down, status, ssh, stop/start, cut/heal)',
  help,
  async run({ argv, log }) {
    const { values, positionals } = parse(argv, {
      name: { type: 'string' },
      hosts: { type: 'string' },
      json: { type: 'boolean' },
      quiet: { type: 'boolean' },
    });
    const [action, ...rest] = positionals;
    if (!ACTIONS.includes(action as Action)) {
      throw new InputError('action', `${action === undefined ? 'missing' : `unknown action "${action}"`}; use one of ${ACTIONS.join(', ')} (see --help)`);
    }
    let hosts: number | undefined;
    if (values.hosts !== undefined) {
      if (!/^\d+$/.test(values.hosts)) throw new InputError('--hosts', `"${values.hosts}" is not a whole number; use e.g. --hosts 3`);
      hosts = Number(values.hosts);
    }
    if (action !== 'ssh' && rest.length > (['up', 'down', 'status'].includes(action!) ? 0 : 1)) {
      throw new InputError('argv', `unexpected argument "${rest.at(-1)}" (see --help)`);
    }
    // Imported here so that listing commands does not load ssh2 and the lab.
    const lab = await import('../../lab/index.ts');
    const opts = { ...(values.name !== undefined ? { name: values.name } : {}), log };
    const json = values.json === true;

    switch (action as Action) {
      case 'up': {
        const info = await lab.labUp({ ...opts, ...(hosts !== undefined ? { hosts } : {}) });
        if (json) printJson({ name: info.name, inventory: info.inventory, hosts: info.hosts.map(({ name, address, ssh }) => ({ name, address, ssh })) });
        else process.stdout.write(`${info.inventory}\n`);
        return 0;
      }
      case 'down': {
        const r = await lab.labDown(opts);
        if (json) printJson(r);
        else if (!r.existed) log.info(`no lab "${r.name}"; nothing to remove`);
        return 0;
      }
      case 'status': {
        const info = await lab.labStatus(opts);
        if (json) {
          printJson({ name: info.name, inventory: info.inventory, hosts: info.hosts.map(({ name, address, ssh, running }) => ({ name, address, ssh, running })) });
        } else {
          const w = Math.max(4, ...info.hosts.map((h) => h.name.length));
          process.stdout.write(`lab ${info.name}  inventory ${info.inventory}\n`);
          process.stdout.write(`${'HOST'.padEnd(w)}  ADDRESS        RUNNING  SSH\n`);
          for (const h of info.hosts) process.stdout.write(`${h.name.padEnd(w)}  ${h.address.padEnd(13)}  ${(h.running ? 'yes' : 'no').padEnd(7)}  ${h.ssh ? 'yes' : 'no'}\n`);
        }
        return info.hosts.every((h) => h.running && h.ssh) ? 0 : 1;
      }
      case 'ssh': {
        const host = hostArg(action!, rest);
        return sshInto(lab, opts, host, rest.slice(1));
      }
      case 'stop':
      case 'start':
      case 'cut':
      case 'heal': {
        const host = hostArg(action!, rest);
        const fn = { stop: lab.labStop, start: lab.labStart, cut: lab.labCut, heal: lab.labHeal }[action as 'stop' | 'start' | 'cut' | 'heal'];
        await fn(host, opts);
        if (json) printJson({ name: values.name ?? lab.DEFAULT_LAB_NAME, host, action });
        else log.info(`${action}: ${host} done`);
        return 0;
      }
    }
  },
};

/** Hands the terminal to OpenSSH with the lab key and the lab known_hosts (strict checking). */
async function sshInto(lab: typeof import('../../lab/index.ts'), opts: { name?: string }, host: string, cmd: string[]): Promise<number> {
  const info = await lab.labStatus(opts);
  const h = info.hosts.find((x) => x.name === host);
  if (!h) throw new InputError('host', `no host "${host}" in lab "${info.name}"; hosts are ${info.hosts.map((x) => x.name).join(', ')}`);
  const { shJoin } = await import('../../transport/quote.ts');
  const args = [
    '-i', info.identityFile,
    '-o', 'IdentitiesOnly=yes',
    '-o', `UserKnownHostsFile="${info.knownHosts}"`,
    '-o', 'GlobalKnownHostsFile=/dev/null',
    '-o', 'StrictHostKeyChecking=yes',
    '-l', 'root',
    h.address,
    // ssh joins its trailing arguments with spaces for the remote shell: quote them as one argv.
    ...(cmd.length > 0 ? ['--', shJoin(cmd)] : []),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('ssh', args, { stdio: 'inherit' });
    child.once('error', (err) => reject(new InputError('ssh', `cannot run ssh (${err.message}); install openssh-client`)));
    child.once('close', (code) => resolve(code ?? 1));
  });
}
