// `trace apply --webhook-reject`: hardwire's own validating webhook (core/components/go/webhook,
// built from source: it denies a ConfigMap with a data key "forbidden") run on the traced host, on
// its loopback only, where the debug kube-apiserver beside the unit calls it. Its serving cert comes
// from a CA issued here for this run alone (the CA's key is never written anywhere); the leaf key is
// written 0600 root and handed to the server by systemd as a credential, so the server itself runs
// as a dynamic user. The server logs each AdmissionReview to its journal: the webhook's own word
// that it was called.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Session } from '../../core/transport/index.ts';
import { issueCa, issueLeaf, windowFor } from '../../core/pki/issue.ts';
import { StepError } from '../../lib/errors.ts';
import { unitOf } from '../../lib/unit.ts';

export const WEBHOOK_UNIT = 'hardwire-trace-webhook';
export const WEBHOOK_PORT = 16444;
/** The path the server answers AdmissionReviews on (main.go). */
export const WEBHOOK_PATH = '/validate';

export interface HostWebhook {
  /** The CA's certificate: the webhook configuration's caBundle. */
  caPem: string;
  url: string;
  /** The server's journal since it started, verbatim (read before the unit is removed). */
  journal(): Promise<string[]>;
  stop(): Promise<void>;
}

async function sh(s: Session, argv: string[], what: string): Promise<string> {
  const r = await s.exec(argv, { allowFail: true });
  if (r.code !== 0)
    throw new StepError('trace apply', `${what}: ${r.stderr.trim() || r.stdout.trim()}`, {
      host: s.host.name,
    });
  return r.stdout.trim();
}

/** Starts the webhook on the host's 127.0.0.1:WEBHOOK_PORT; a leftover unit of an earlier run is stopped first. */
export async function startHostWebhook(s: Session, binary: string): Promise<HostWebhook> {
  await s.exec(['systemctl', 'stop', unitOf(WEBHOOK_UNIT)], { allowFail: true });
  await s.exec(['systemctl', 'reset-failed', unitOf(WEBHOOK_UNIT)], { allowFail: true });
  const ca = await issueCa(
    {
      id: 'ca',
      file: 'trace-webhook-ca',
      cn: 'hardwire-trace-webhook-ca',
      why: 'trace apply --webhook-reject trust root',
      placements: [],
    },
    windowFor(1),
  );
  const leaf = await issueLeaf(
    {
      id: 'trace-webhook',
      file: 'trace-webhook',
      ca: 'ca',
      cn: 'hardwire-trace-webhook',
      o: [],
      usage: 'server',
      dns: [],
      ips: ['127.0.0.1'],
      why: 'trace webhook serving cert',
      placements: [],
    },
    ca,
    windowFor(1),
  );
  // The binary where the dynamic user can run it (not under /tmp or /var/tmp: DynamicUser= gives the
  // service private ones); the key where only root (systemd) reads it.
  const dir = await sh(s, ['mktemp', '-d', '/run/hardwire-trace-webhook.XXXXXX'], 'mktemp');
  await sh(s, ['chmod', '0755', dir], 'chmod');
  await sh(s, ['install', '-d', '-m', '0700', `${dir}/tls`], "the key's directory");
  await s.writeFileAtomic(`${dir}/webhook`, await readFile(binary), {
    mode: 0o755,
    owner: 'root:root',
  });
  await s.writeFileAtomic(`${dir}/tls/tls.crt`, leaf.certPem, { mode: 0o644, owner: 'root:root' });
  await s.writeFileAtomic(`${dir}/tls/tls.key`, leaf.keyPem, { mode: 0o600, owner: 'root:root' });
  const creds = `/run/credentials/${unitOf(WEBHOOK_UNIT)}`;
  const since = (await sh(s, ['date', '+%s'], 'date')).trim();
  await sh(
    s,
    [
      'systemd-run',
      `--unit=${WEBHOOK_UNIT}`,
      '--collect',
      '--quiet',
      '-p',
      'DynamicUser=yes',
      '-p',
      `LoadCredential=tls.crt:${dir}/tls/tls.crt`,
      '-p',
      `LoadCredential=tls.key:${dir}/tls/tls.key`,
      '--',
      `${dir}/webhook`,
      `-listen=127.0.0.1:${WEBHOOK_PORT}`,
      `-cert=${creds}/tls.crt`,
      `-key=${creds}/tls.key`,
    ],
    'start the webhook',
  );
  const journal = async () =>
    (
      await s.exec(
        [
          'journalctl',
          '-u',
          unitOf(WEBHOOK_UNIT),
          '--since',
          `@${since}`,
          '-o',
          'cat',
          '--no-pager',
        ],
        { allowFail: true },
      )
    ).stdout
      .trimEnd()
      .split('\n')
      .filter(Boolean);
  const stop = async () => {
    await s.exec(['systemctl', 'stop', unitOf(WEBHOOK_UNIT)], { allowFail: true });
    await s.exec(['rm', '-rf', '--', dir], { allowFail: true });
  };
  for (let i = 0; ; i++) {
    const listening = (await journal()).some((l) =>
      l.includes(`listening on https://127.0.0.1:${WEBHOOK_PORT}`),
    );
    // It prints that line before it binds: still active a moment later, it holds the port.
    if (
      listening &&
      (
        await sleep(500).then(() =>
          s.exec(['systemctl', 'is-active', unitOf(WEBHOOK_UNIT)], { allowFail: true }),
        )
      ).code === 0
    )
      break;
    if (i >= 30 || listening) {
      const lines = await journal();
      await stop();
      throw new StepError(
        'trace apply',
        `the webhook did not keep listening on 127.0.0.1:${WEBHOOK_PORT} (within 30 s)`,
        { host: s.host.name, detail: lines.slice(-10) },
      );
    }
    await sleep(1000);
  }
  return {
    caPem: ca.certPem,
    url: `https://127.0.0.1:${WEBHOOK_PORT}${WEBHOOK_PATH}`,
    journal,
    stop,
  };
}
