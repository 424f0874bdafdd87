// A component that elects a leader (kube-scheduler, kube-controller-manager) is proven only while
// the traced instance holds its Lease; on a lab of several control-plane hosts another host's
// instance would keep it. So the other hosts' units stop for the proof, each through the Wet gate
// like every host change, and start again afterwards, also when the proof fails.
import type { Wet } from '../../core/apply/wet.ts';
import { StepError } from '../../lib/errors.ts';

async function systemctl(wet: Wet, host: string, verb: 'stop' | 'start', unit: string, why: string): Promise<void> {
  await wet.run(host, `${verb} ${unit} ${why}`, async (s) => {
    const r = await s.exec(['systemctl', verb, unit], { allowFail: true });
    if (r.code !== 0) throw new StepError('flags prove', `systemctl ${verb} ${unit}: ${r.stderr.trim() || r.stdout.trim()}`, { host });
  });
}

/**
 * Runs `fn` with `unit` stopped on each of `hosts`; every host stopped is started again afterwards,
 * whatever `fn` did. A start that fails is thrown once all are started (unless `fn` threw first).
 */
export async function withOthersStopped<T>(wet: Wet, hosts: string[], unit: string, fn: () => Promise<T>): Promise<T> {
  const stopped: string[] = [];
  let ok = false;
  try {
    for (const h of hosts) {
      await systemctl(wet, h, 'stop', unit, 'for the proof (its Lease must go to the traced instance)');
      stopped.push(h);
    }
    const out = await fn();
    ok = true;
    return out;
  } finally {
    const failed: unknown[] = [];
    for (const h of stopped) await systemctl(wet, h, 'start', unit, 'again after the proof').catch((err: unknown) => failed.push(err));
    // The proof's own error, if any, stays the one thrown.
    if (ok && failed.length) throw failed[0];
  }
}
