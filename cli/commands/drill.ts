import { writeFileSync } from 'node:fs';
import type { Command } from '../command.ts';
import { parse } from '../args.ts';
import { stateDirFrom } from '../common.ts';
import { inventoryOrLab } from '../lab-inventory.ts';
import { printJson } from '../../lib/log.ts';
import { InputError } from '../../lib/errors.ts';
import { TARGETS, certExpiryDrill, drillMarkdown, type Mode, type Target } from '../../drills/cert-expiry.ts';

export const command: Command = {
  name: 'drill',
  summary: 'break a wired cluster in a controlled way, capture the real failure, recover in order, report (cert-expiry)',
  help: `
usage: hardwire drill cert-expiry [--target TARGET] [--mode window|expired] [--window SECONDS]
                                  [--observe-timeout SECONDS] [--gate-timeout SECONDS]
                                  [--inventory FILE] [--state-dir DIR] [--md FILE] [--json]

Drill 3.C5, the expired component certificate, against a wired cluster (the local lab by default).
  1. baseline: every gate green, CA fingerprints (operator copy and every host), Lease renew times
  2. break: reissue the target's cert from the real CA (same subject, SANs, usages and key), valid
     only for --window seconds (default 120), or already expired with --mode expired; install it
     on the hosts that have it (etcd-peer: the first etcd host only) and restart the component
  3. observe: the first x509 line from the journal of the component that logs it (journalctl -g,
     never synthesised), the symptom (Lease not renewing, /readyz etcd failing, TLS rejected,
     etcd unhealthy), and what "certs check" shows. A client cert is checked only at the TLS
     handshake: in window mode, if nothing fails 30 s after expiry, the component is restarted
     once more (recorded), as the next reboot would
  4. recover: "certs renew --restart" for the target (CA unchanged): push, restart its readers one
     host at a time with wire's gates in wire's order, then every gate must be green
  5. report: timeline, --md FILE, --json {target, mode, baseline, captured, symptom,
     checkAfterBreak, recovery, recovered, caFingerprint, timeToDetectMs, timeToRecoverMs, ...}
Targets: ${TARGETS.join(', ')} (default kube-scheduler).
timeToDetectMs: from the moment the component first presented an invalid cert (expiry, or the
restart that loaded an expired one) to when both the x509 line and the symptom were seen.
timeToRecoverMs: from the start of the renew to every gate green. Exit 1 unless recovered.
`,
  async run({ argv, log }) {
    const { values, positionals } = parse(argv, {
      inventory: { type: 'string', short: 'i' }, 'state-dir': { type: 'string' }, json: { type: 'boolean' },
      target: { type: 'string' }, mode: { type: 'string' }, window: { type: 'string' }, md: { type: 'string' },
      'observe-timeout': { type: 'string' }, 'gate-timeout': { type: 'string' },
    });
    if (positionals[0] !== 'cert-expiry' || positionals.length !== 1) throw new InputError('drill', `${positionals.length ? `unknown drill "${positionals.join(' ')}"` : 'missing'}; the drill is "cert-expiry" (see --help)`);
    const target = (values.target ?? 'kube-scheduler') as Target;
    if (!TARGETS.includes(target)) throw new InputError('--target', `"${values.target}" is not one of ${TARGETS.join(', ')}`);
    const mode = (values.mode ?? 'window') as Mode;
    if (mode !== 'window' && mode !== 'expired') throw new InputError('--mode', `"${values.mode}" must be window or expired`);
    const seconds = (name: string, v: string | undefined, def: number, min: number) => {
      const n = Number(v ?? def);
      if (!Number.isFinite(n) || n < min) throw new InputError(`--${name}`, `"${v}" must be a number of seconds, at least ${min}`);
      return n;
    };
    const windowS = seconds('window', values.window, 120, 10);
    if (mode === 'expired' && values.window !== undefined) throw new InputError('--window', 'only applies to --mode window');
    const observeS = seconds('observe-timeout', values['observe-timeout'], 180, 10);
    const gateS = seconds('gate-timeout', values['gate-timeout'], 120, 1);
    const inv = await inventoryOrLab(values, log, false);
    const report = await certExpiryDrill(inv, stateDirFrom(values), { target, mode, windowS, observeTimeoutMs: observeS * 1000, gateTimeoutMs: gateS * 1000 }, log);
    const md = drillMarkdown(report);
    if (values.md) writeFileSync(values.md, md);
    if (values.json) printJson(report);
    else process.stdout.write(md);
    return report.recovered ? 0 : 1;
  },
};
