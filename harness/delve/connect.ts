// Reaching a delve that runs a component on a host: its socket through the SSH connection, and the
// unit's account and credentials carried over to the transient unit. prove and trace both do this.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Session } from '../../core/transport/index.ts';
import { StepError } from '../../lib/errors.ts';
import { DlvClient } from './rpc.ts';
import { unitOf } from '../../lib/unit.ts';

export async function connectDlv(
  s: Session,
  socket: string,
  deadline: number,
  step = 'flags prove',
): Promise<DlvClient> {
  for (;;) {
    try {
      const ch = await s.openLocalSocket(socket);
      const c = new DlvClient(ch);
      await c.breakpoints(); // answers once delve has loaded the binary
      return c;
    } catch (err) {
      if (Date.now() > deadline)
        throw new StepError(step, `delve did not answer on ${socket}: ${String(err)}`, {
          host: s.host.name,
        });
      await sleep(1000);
    }
  }
}

/**
 * What the transient unit takes over from the component's unit, as systemd-run properties: its
 * account (etcd runs as etcd: files the debuggee writes keep the unit's owner), and its systemd
 * credentials. etcd's flags name its cert and key under /run/credentials/etcd.service, which systemd
 * removes when etcd.service stops; the transient unit loads the same credentials into its own
 * directory, and that directory is bind-mounted where the flags look, so the flags stay the unit's.
 */
export function unitProperties(
  unitText: string,
  unit: string,
  debugUnit: string,
): { user?: string; props: string[] } {
  const directive = (key: string) =>
    [...unitText.matchAll(new RegExp(`^${key}=(.+)$`, 'gm'))].map((m) => m[1]!.trim());
  const [user] = directive('User');
  const props = [
    ...directive('User').map((v) => `User=${v}`),
    ...directive('Group').map((v) => `Group=${v}`),
    ...directive('LoadCredential').map((v) => `LoadCredential=${v}`),
  ];
  if (directive('LoadCredential').length)
    props.push(`BindReadOnlyPaths=/run/credentials/${unitOf(debugUnit)}:/run/credentials/${unit}`);
  return { ...(user ? { user } : {}), props: props.flatMap((p) => ['-p', p]) };
}

/**
 * systemd-run's argv for a transient unit running delve headless on a unix socket, with delve's
 * config under `configDir` and the debuggee `argv` (argv[0] its binary).
 */
export function delveUnitArgv(o: {
  unit: string;
  props: string[];
  configDir: string;
  env?: string[];
  dlv: string;
  socket: string;
  argv: string[];
}): string[] {
  return [
    'systemd-run',
    `--unit=${o.unit}`,
    '--collect',
    '--quiet',
    ...o.props,
    `--setenv=XDG_CONFIG_HOME=${o.configDir}`,
    ...(o.env ?? []).map((e) => `--setenv=${e}`),
    '--',
    o.dlv,
    'exec',
    '--headless',
    `--listen=unix:${o.socket}`,
    '--api-version=2',
    '--check-go-version=false',
    o.argv[0]!,
    '--',
    ...o.argv.slice(1),
  ];
}
