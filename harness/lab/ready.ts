// "Up" means what a VM user means: sshd answers with the pinned key and systemd finished booting.
import { Socket } from 'node:net';
import { StepError } from '../../lib/errors.ts';
import { connect } from '../../core/transport/dial.ts';
import type { Session, SshTarget } from '../../core/transport/session.ts';
import { consoleFailures, consoleLog } from './container.ts';
import type { LabFiles, LabHostState } from './state.ts';
import { retry, waitFor } from '../../lib/retry.ts';
import { proxyJumpOf } from './inner.ts';

/** What SSH needs of a lab host, container or VM. */
type Reachable = Pick<LabHostState, 'name' | 'address' | 'jump'>;

export function sshTarget(files: LabFiles, host: Reachable): SshTarget {
  return {
    name: host.name,
    address: host.address,
    ssh: {
      user: 'root',
      port: 22,
      identityFile: files.key,
      proxyJump: proxyJumpOf(host),
      become: '',
    },
  };
}

/** Where this machine opens TCP to reach the host's sshd: the host, or for an inner host its bastion. */
function firstHop(host: Reachable): string {
  return host.jump ?? host.address;
}

/** An inner host's sshd answers once an SSH connection through the bastion succeeds (a refused forward fails fast). */
function waitJumped(files: LabFiles, host: LabHostState, deadline: number): Promise<Session> {
  return retry(() => labConnectHost(files, host, 5000), {
    timeoutMs: deadline - Date.now(),
    intervalMs: 250,
    onTimeout: (err) => {
      throw new StepError(
        'lab-wait-ssh',
        `sshd on ${host.address}:22 did not answer through ${proxyJumpOf(host)}: ${(err as Error).message} (console: ${consoleLog(host)})`,
        { host: host.name, detail: consoleFailures(host) },
      );
    },
  });
}

function tcpOpen(address: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
    s.connect(port, address);
  });
}

export function labConnectHost(
  files: LabFiles,
  host: Reachable,
  timeoutMs = 10_000,
): Promise<Session> {
  return connect(sshTarget(files, host), { knownHostsFile: files.knownHosts, timeoutMs });
}

/** Waits for sshd, then for `systemctl is-system-running` to settle on running or degraded. */
export async function waitReady(
  files: LabFiles,
  host: LabHostState,
  timeoutMs = 90_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  if (!(await waitFor(() => tcpOpen(firstHop(host), 22, 1000), timeoutMs, 50))) {
    const failed = consoleFailures(host);
    throw new StepError(
      'lab-wait-ssh',
      `sshd on ${firstHop(host)}:22 did not answer within ${timeoutMs / 1000} s (console: ${consoleLog(host)})`,
      { host: host.name, detail: failed },
    );
  }
  const s = host.jump ? await waitJumped(files, host, deadline) : await labConnectHost(files, host);
  try {
    const left = Math.max(5000, deadline - Date.now());
    const r = await s.exec(['systemctl', 'is-system-running', '--wait'], {
      allowFail: true,
      timeoutMs: left,
    });
    const st = r.stdout.trim();
    if (st !== 'running' && st !== 'degraded') {
      const failed = await s.exec(['systemctl', '--failed', '--no-legend', '--plain'], {
        allowFail: true,
      });
      throw new StepError(
        'lab-wait-systemd',
        `systemd reports "${st}" instead of running or degraded`,
        { host: host.name, detail: failed.stdout.trim().split('\n').filter(Boolean) },
      );
    }
  } finally {
    await s.close();
  }
}

/** Quick health probe for `status`: true when an SSH command round-trips. */
export async function sshAnswers(
  files: LabFiles,
  host: Reachable,
  timeoutMs = 3000,
): Promise<boolean> {
  if (!(await tcpOpen(firstHop(host), 22, Math.min(timeoutMs, 1000)))) return false;
  try {
    const s = await labConnectHost(files, host, timeoutMs);
    try {
      return (await s.exec(['true'], { allowFail: true, timeoutMs })).code === 0;
    } finally {
      await s.close();
    }
  } catch {
    return false;
  }
}
