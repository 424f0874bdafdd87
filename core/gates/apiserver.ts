// kube-apiserver gate: /livez and /readyz return 200 on the host, using the admin credentials.
import { StepError } from '../../lib/errors.ts';
import { APISERVER_PORT } from '../../lib/constants.ts';
import { kubeRequest, withServer, type KubeCreds } from '../transport/kube-api.ts';
import type { ReadSession as Session } from '../transport/index.ts';
import { API_POLL_MS } from './wait.ts';
import { retry } from '../../lib/retry.ts';
import { journalTail } from './journal.ts';

export async function checkApiserver(creds: KubeCreds, address: string): Promise<void> {
  const c = withServer(creds, `https://${address}:${APISERVER_PORT}`);
  for (const path of ['/livez', '/readyz']) {
    const r = await kubeRequest(c, 'GET', path, { timeoutMs: 5000 });
    if (r.status !== 200)
      throw new Error(
        `${path} returned ${r.status}: ${r.body
          .trim()
          .split('\n')
          .filter((l) => l.includes('failed'))
          .join('; ')
          .slice(0, 300)}`,
      );
  }
}

export async function apiserverGate(
  creds: KubeCreds,
  host: { name: string; address: string },
  s: Session | undefined,
  timeoutMs: number,
): Promise<void> {
  try {
    await retry(() => checkApiserver(creds, host.address), {
      timeoutMs,
      intervalMs: API_POLL_MS,
      startBeforeDeadline: true,
    });
  } catch (err) {
    const detail = s ? await journalTail(s, 'kube-apiserver') : [];
    throw new StepError(
      'gate kube-apiserver',
      `not ready after ${timeoutMs / 1000}s: ${err instanceof Error ? err.message : String(err)}`,
      { host: host.name, detail },
    );
  }
}
