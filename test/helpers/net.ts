// One TCP connect from this machine to port 22: the error code it ended with (CONNECTED, TIMEOUT or the errno), and how long it took.
import { Socket } from 'node:net';

export function tcpAttempt(
  addr: string,
  timeoutMs = 5000,
): Promise<{ result: string; ms: number }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const s = new Socket();
    const done = (result: string) => {
      s.destroy();
      resolve({ result, ms: Math.round(performance.now() - t0) });
    };
    s.setTimeout(timeoutMs, () => done('TIMEOUT'));
    s.once('connect', () => done('CONNECTED'));
    s.once('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
    s.connect(22, addr);
  });
}
