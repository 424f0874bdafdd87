// Load-or-create for the whole PKI in the operator's pki/ directory.
// A CA is never regenerated; a leaf is kept while it fits its spec, else reissued with the reason.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { X509Certificate } from 'node:crypto';
import { InputError, StepError } from '../../lib/errors.ts';
import { writeFileAtomic, readIfExists } from '../../lib/fsx.ts';
import type { Inventory } from '../inventory/load.ts';
import { CAS, allLeaves, kubeconfigFiles, type CaId, type LeafSpec } from './table.ts';
import { issueCa, issueLeaf, keyAlgorithmOf, newKey, windowFor, type Signer } from './issue.ts';
import { leafMismatch } from './inspect.ts';
import { kubeconfigServer, kubeconfigYaml } from './kubeconfig.ts';
import { isUsableEncryptionConfig, newEncryptionConfig } from './encryption.ts';

export type PkiAction = 'created' | 'kept' | 'reissued';

export interface PkiEvent {
  id: string;
  file: string;
  action: PkiAction;
  reasons: string[];
}

export interface PkiResult {
  dir: string;
  events: PkiEvent[];
  cas: Record<CaId, Signer>;
}

const KEY_MODE = 0o600;

export function clusterStateDir(stateDir: string, inv: Inventory): string {
  return join(stateDir, inv.cluster.name);
}

export function pkiDir(stateDir: string, inv: Inventory): string {
  return join(clusterStateDir(stateDir, inv), 'pki');
}

function loadCa(dir: string, file: string, id: string): Signer | undefined {
  const crt = join(dir, `${file}.crt`);
  const key = join(dir, `${file}.key`);
  const hasCrt = existsSync(crt);
  const hasKey = existsSync(key);
  if (!hasCrt && !hasKey) return undefined;
  if (hasCrt !== hasKey) {
    throw new StepError(
      'pki',
      `CA ${id}: found ${hasCrt ? `${file}.crt but not ${file}.key` : `${file}.key but not ${file}.crt`}; restore the missing file from backup (hardwire never regenerates a CA)`,
    );
  }
  const certPem = readFileSync(crt, 'utf8');
  const keyPem = readFileSync(key, 'utf8');
  const x = new X509Certificate(certPem);
  const pub = createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' });
  if (!pub.equals(x.publicKey.export({ type: 'spki', format: 'der' }))) {
    throw new StepError(
      'pki',
      `CA ${id}: ${file}.key does not match ${file}.crt; restore the pair from backup`,
    );
  }
  if (new Date(x.validTo).getTime() < Date.now()) {
    throw new StepError(
      'pki',
      `CA ${id} expired at ${x.validTo}; CA rotation is a deliberate operation, not something hardwire does silently`,
    );
  }
  writeFileAtomic(key, readFileSync(key), KEY_MODE); // the same bytes: repairs a drifted mode only
  return { certPem, keyPem };
}

/**
 * Refuses, before anything is written, when a CA or the service-account key already exists with
 * another algorithm than cluster.keyAlgorithm: every leaf hangs off the CAs, and hardwire never
 * regenerates one.
 */
function checkExistingAlgorithm(dir: string, inv: Inventory): void {
  const want = inv.cluster.keyAlgorithm;
  const files = [...CAS.map((c) => `${c.file}.crt`), 'sa.key'];
  for (const file of files) {
    const pem = readIfExists(join(dir, file));
    if (pem === undefined) continue;
    let have: string;
    try {
      have = keyAlgorithmOf(
        file.endsWith('.crt') ? new X509Certificate(pem).publicKey : createPrivateKey(pem),
      );
    } catch {
      continue; // loadCa and ensureServiceAccountKeys name an unreadable file
    }
    if (have !== want)
      throw new InputError(
        'cluster.keyAlgorithm',
        `is ${want}, but the key of the existing ${join(dir, file)} is ${have}; set cluster.keyAlgorithm: ${have} to keep this cluster's PKI (hardwire never regenerates a CA), or use a new --state-dir for a new cluster`,
      );
  }
}

async function ensureCas(
  dir: string,
  inv: Inventory,
  events: PkiEvent[],
): Promise<Record<CaId, Signer>> {
  const out = {} as Record<CaId, Signer>;
  await Promise.all(
    CAS.map(async (spec) => {
      const existing = loadCa(dir, spec.file, spec.id);
      if (existing) {
        out[spec.id] = existing;
        events.push({ id: spec.id, file: `${spec.file}.crt`, action: 'kept', reasons: [] });
        return;
      }
      const signed = await issueCa(
        spec,
        windowFor(inv.cluster.certValidity.caDays),
        inv.cluster.keyAlgorithm,
      );
      writeFileAtomic(join(dir, `${spec.file}.key`), signed.keyPem, KEY_MODE);
      writeFileAtomic(join(dir, `${spec.file}.crt`), signed.certPem);
      out[spec.id] = signed;
      events.push({ id: spec.id, file: `${spec.file}.crt`, action: 'created', reasons: [] });
    }),
  );
  return out;
}

async function ensureLeaf(
  dir: string,
  spec: LeafSpec,
  ca: Signer,
  inv: Inventory,
): Promise<PkiEvent> {
  const crtPath = join(dir, `${spec.file}.crt`);
  const keyPath = join(dir, `${spec.file}.key`);
  const certPem = readIfExists(crtPath);
  const keyPem = readIfExists(keyPath);
  let reasons: string[] = [];
  if (certPem !== undefined && keyPem !== undefined) {
    reasons = leafMismatch(spec, certPem, keyPem, ca.certPem, inv.cluster.keyAlgorithm);
    if (reasons.length === 0) {
      writeFileAtomic(keyPath, keyPem, KEY_MODE); // repairs a drifted mode, never the content
      return { id: spec.id, file: `${spec.file}.crt`, action: 'kept', reasons };
    }
  }
  const signed = await issueLeaf(spec, ca, windowFor(inv.cluster.certValidity.leafDays), {
    alg: inv.cluster.keyAlgorithm,
  });
  writeFileAtomic(keyPath, signed.keyPem, KEY_MODE);
  writeFileAtomic(crtPath, signed.certPem);
  const action: PkiAction = certPem === undefined ? 'created' : 'reissued';
  return {
    id: spec.host ? `${spec.id}@${spec.host}` : spec.id,
    file: `${spec.file}.crt`,
    action,
    reasons,
  };
}

async function ensureServiceAccountKeys(dir: string, inv: Inventory): Promise<PkiEvent> {
  const keyPath = join(dir, 'sa.key');
  const pubPath = join(dir, 'sa.pub');
  const keyPem = readIfExists(keyPath);
  if (keyPem !== undefined) {
    // The public half is derived, so it can always be rewritten to match.
    const pub = createPublicKey(createPrivateKey(keyPem))
      .export({ type: 'spki', format: 'pem' })
      .toString();
    writeFileAtomic(keyPath, readFileSync(keyPath), KEY_MODE); // the same bytes: repairs a drifted mode only
    const r = writeFileAtomic(pubPath, pub);
    return {
      id: 'sa',
      file: 'sa.key',
      action: 'kept',
      reasons: r === 'unchanged' ? [] : ['sa.pub rewritten from sa.key'],
    };
  }
  const k = await newKey(inv.cluster.keyAlgorithm);
  writeFileAtomic(keyPath, k.keyPem, KEY_MODE);
  writeFileAtomic(pubPath, k.publicPem);
  return { id: 'sa', file: 'sa.key', action: 'created', reasons: [] };
}

function ensureEncryptionConfig(dir: string): PkiEvent {
  const path = join(dir, 'encryption-config.yaml');
  const text = readIfExists(path);
  if (text !== undefined) {
    if (!isUsableEncryptionConfig(text)) {
      throw new StepError(
        'pki',
        `${path} exists but holds no usable aescbc/secretbox key; fix it by hand (replacing it would make stored Secrets unreadable)`,
      );
    }
    writeFileAtomic(path, readFileSync(path), KEY_MODE); // the same bytes: repairs a drifted mode only
    return { id: 'encryption-config', file: 'encryption-config.yaml', action: 'kept', reasons: [] };
  }
  writeFileAtomic(path, newEncryptionConfig(), KEY_MODE);
  return {
    id: 'encryption-config',
    file: 'encryption-config.yaml',
    action: 'created',
    reasons: [],
  };
}

/** Loads or creates every CA, key, leaf and kubeconfig under <stateDir>/<cluster>/pki. */
export async function ensurePki(
  stateDir: string,
  inv: Inventory,
  only?: (spec: LeafSpec) => boolean,
): Promise<PkiResult> {
  const dir = pkiDir(stateDir, inv);
  const events: PkiEvent[] = [];
  checkExistingAlgorithm(dir, inv);
  // The service-account key needs no CA: it is generated while the CAs and leaves are.
  const [cas, sa] = await Promise.all([
    ensureCas(dir, inv, events),
    ensureServiceAccountKeys(dir, inv),
  ]);
  const leaves = allLeaves(inv).filter((s) => !only || only(s));
  const leafEvents = await Promise.all(
    leaves.map((spec) => ensureLeaf(dir, spec, cas[spec.ca], inv)),
  );
  events.push(...leafEvents, sa, ensureEncryptionConfig(dir));
  writeKubeconfigs(stateDir, inv, cas.ca);
  events.sort((a, b) => a.file.localeCompare(b.file));
  return { dir, events, cas };
}

/** Operator copies of the kubeconfigs, under <stateDir>/<cluster>/kubeconfigs/. */
export function writeKubeconfigs(stateDir: string, inv: Inventory, ca: Signer): void {
  const dir = pkiDir(stateDir, inv);
  for (const { spec, leaf, host } of kubeconfigFiles(inv)) {
    const certPem = readIfExists(join(dir, `${leaf.file}.crt`));
    const keyPem = readIfExists(join(dir, `${leaf.file}.key`));
    if (certPem === undefined || keyPem === undefined) continue;
    const yaml = kubeconfigYaml({
      cluster: inv.cluster.name,
      server: kubeconfigServer(spec, inv.endpoint),
      caPem: ca.certPem,
      certPem,
      keyPem,
      user: leaf.cn,
    });
    // A node's own identity (the kubelet's) under kubeconfigs/<host>/.
    writeFileAtomic(
      join(clusterStateDir(stateDir, inv), 'kubeconfigs', ...(host ? [host] : []), spec.file),
      yaml,
      KEY_MODE,
    );
  }
}
