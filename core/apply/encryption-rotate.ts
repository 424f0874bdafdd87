// `hardwire encryption rotate`: the documented key rotation, each config stage wired to every host
// (wire's own plan: the file pushed, each apiserver restarted in order and gated) before the next.
// The state dir's pki/encryption-config.yaml is written before each wire, so an interrupted rotation
// goes on from the stage it reached (pki/encryption.ts rotationStage).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StepError } from '../../lib/errors.ts';
import { writeFileAtomic } from '../../lib/fsx.ts';
import type { Logger } from '../../lib/log.ts';
import type { Inventory } from '../inventory/load.ts';
import { pkiDir } from '../pki/store.ts';
import {
  addKey,
  dropOldKeys,
  encryptionConfig,
  encryptionKeys,
  promoteKey,
  rotationStage,
  writePrefix,
  type EncryptionKey,
} from '../pki/encryption.ts';
import { connect } from '../transport/index.ts';
import { etcdctlArgv } from '../gates/etcd.ts';
import { kubeJson, type KubeCreds } from '../transport/kube-api.ts';
import { adminCreds } from './creds.ts';
import type { WireOptions } from './context.ts';
import { wire } from './wire.ts';

export interface RotationStep {
  step: string;
  /** The keys the apiservers run with after it, first (encrypting) first: provider/name. */
  keys: string[];
  ms: number;
}

export interface RotationReport {
  from: string[];
  to: string[];
  steps: RotationStep[];
  /** Secrets rewritten through the API, so that each is stored under the new key. */
  rewritten: number;
  dryRun: boolean;
}

const names = (keys: readonly EncryptionKey[]) => keys.map((k) => `${k.provider}/${k.name}`);

interface SecretList {
  items: { metadata: { namespace: string; name: string } }[];
}

/** Every Secret read and written back unchanged: the apiserver stores each with the first key. */
async function rewriteSecrets(creds: KubeCreds, log: Logger): Promise<number> {
  const { json } = await kubeJson<SecretList>(creds, 'GET', '/api/v1/secrets');
  let n = 0;
  for (const { metadata } of json.items) {
    const path = `/api/v1/namespaces/${metadata.namespace}/secrets/${metadata.name}`;
    // A Secret changed or deleted between the GET and the PUT: read it again, or skip it if gone.
    for (let attempt = 0; ; attempt++) {
      const got = await kubeJson<Record<string, unknown>>(creds, 'GET', path, { allow: [404] });
      if (got.status === 404) break;
      const put = await kubeJson(creds, 'PUT', path, { body: got.json, allow: [404, 409] });
      if (put.status === 200 || put.status === 201) {
        n++;
        break;
      }
      if (put.status === 404) break;
      if (attempt >= 4)
        throw new StepError('encryption', `${path} kept conflicting; run the rotation again`);
    }
  }
  log.info(`  rewrote ${n} Secret(s) under the new key`);
  return n;
}

/**
 * Secrets in etcd not stored under `prefix` (the new key's), read with etcdctl on an etcd host: the
 * check before the old key goes, since a Secret left under it would be unreadable after.
 */
async function notUnder(inv: Inventory, opts: WireOptions, prefix: string): Promise<string[]> {
  const h = inv.etcdHosts[0]!;
  const s = await connect(h, {
    ...(inv.knownHostsFile ? { knownHostsFile: inv.knownHostsFile } : {}),
    acceptNewHostKeys: opts.acceptNewHostKeys,
  });
  try {
    const r = await s.exec(
      etcdctlArgv(inv, 'get', '/registry/secrets/', '--prefix', '-w', 'json'),
      {
        timeoutMs: 120_000,
      },
    );
    const kvs = (JSON.parse(r.stdout) as { kvs?: { key: string; value: string }[] }).kvs ?? [];
    return kvs
      .filter(
        (kv) =>
          !Buffer.from(kv.value, 'base64').subarray(0, prefix.length).equals(Buffer.from(prefix)),
      )
      .map((kv) => Buffer.from(kv.key, 'base64').toString().replace('/registry/secrets/', ''));
  } finally {
    await s.close();
  }
}

export async function rotateEncryption(
  inv: Inventory,
  stateDir: string,
  opts: WireOptions,
  log: Logger,
): Promise<RotationReport> {
  const path = join(pkiDir(stateDir, inv), 'encryption-config.yaml');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new StepError('encryption', `${path} does not exist; run "hardwire wire" first`);
  }
  let keys = encryptionKeys(text);
  if (!keys)
    throw new StepError(
      'encryption',
      `${path} holds no usable aescbc/secretbox key; fix it by hand`,
    );
  const report: RotationReport = {
    from: names(keys),
    to: [],
    steps: [],
    rewritten: 0,
    dryRun: opts.dryRun,
  };
  const apply = async (
    step: string,
    next: EncryptionKey[] | undefined,
    work?: () => Promise<void>,
  ) => {
    const t0 = performance.now();
    log.step(step);
    if (!opts.dryRun) {
      await work?.();
      if (next) {
        writeFileAtomic(path, encryptionConfig(next), 0o600);
        await wire(inv, stateDir, opts, log);
      }
    }
    if (next) keys = next;
    report.steps.push({ step, keys: names(keys!), ms: Math.round(performance.now() - t0) });
  };
  if (rotationStage(keys) === 'idle')
    await apply(
      'add a new secretbox key second (it decrypts; the current key still encrypts)',
      addKey(keys),
    );
  if (rotationStage(keys!) === 'added')
    await apply('make the new key first (it encrypts every write from now on)', promoteKey(keys!));
  await apply(
    'rewrite every Secret through the API, so that each is stored under the new key',
    undefined,
    async () => {
      report.rewritten = await rewriteSecrets(adminCreds(join(stateDir, inv.cluster.name)), log);
    },
  );
  await apply('check in etcd that every Secret is under the new key', undefined, async () => {
    const left = await notUnder(inv, opts, writePrefix(keys!));
    if (left.length)
      throw new StepError(
        'encryption',
        `${left.length} Secret(s) not under the new key yet (first: ${left[0]}); the old key stays: run "hardwire encryption rotate" again`,
      );
  });
  await apply('drop the old key(s)', dropOldKeys(keys!));
  report.to = names(keys!);
  return report;
}
