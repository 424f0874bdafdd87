// `certs renew`: reissue leaf certificates from the existing CA, keeping subject, SANs, usages and
// (unless asked) the key; then push them through wire's own phases. The CA is never touched: its
// fingerprint is read before and after, and a difference is an error.
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Inventory } from '../inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { StepError } from '../../lib/errors.ts';
import { writeFileAtomic } from '../../lib/fsx.ts';
import { CAS, allLeaves, type CaId, type LeafSpec, type Usage } from '../pki/table.ts';
import { issueLeaf, newKey, windowFor, type Signer } from '../pki/issue.ts';
import { inspect } from '../pki/inspect.ts';
import { clusterStateDir, pkiDir, writeKubeconfigs } from '../pki/store.ts';
import { newContext, type WireContext } from '../apply/context.ts';
import { runPhases, type Phase } from '../apply/phase.ts';
import { PLAN_PHASES } from '../apply/wire.ts';
import { pushPhase } from '../apply/phases/push.ts';
import { snapshotPhase } from '../apply/phases/snapshot.ts';
import { statusPhase } from '../apply/phases/status.ts';
import { START_PHASES } from '../apply/phases/start.ts';
import { remoteCerts } from './catalog.ts';

export type CaFingerprints = Record<CaId, string>;

/** The operator CA certs' SHA-256 fingerprints, plus a hash of each key file (never printed). */
export function caFingerprints(
  stateDir: string,
  inv: Inventory,
): { certs: CaFingerprints; keys: Record<CaId, string> } {
  const dir = pkiDir(stateDir, inv);
  const certs = {} as CaFingerprints;
  const keys = {} as Record<CaId, string>;
  for (const ca of CAS) {
    const crt = join(dir, `${ca.file}.crt`);
    const key = join(dir, `${ca.file}.key`);
    if (!existsSync(crt) || !existsSync(key)) {
      throw new StepError(
        'certs renew',
        `CA ${ca.id}: ${existsSync(crt) ? key : crt} does not exist; renew only reissues leaves from an existing CA (run "hardwire wire" or "hardwire pki" first)`,
      );
    }
    certs[ca.id] = new X509Certificate(readFileSync(crt)).fingerprint256;
    keys[ca.id] = createPublicKey(createPrivateKey(readFileSync(key)))
      .export({ type: 'spki', format: 'der' })
      .toString('base64');
  }
  return { certs, keys };
}

export function loadSigner(stateDir: string, inv: Inventory, ca: CaId): Signer {
  const file = CAS.find((c) => c.id === ca)!.file;
  const dir = pkiDir(stateDir, inv);
  return {
    certPem: readFileSync(join(dir, `${file}.crt`), 'utf8'),
    keyPem: readFileSync(join(dir, `${file}.key`), 'utf8'),
  };
}

function usageOf(x: { serverAuth: boolean; clientAuth: boolean }): Usage {
  return x.serverAuth && x.clientAuth ? 'peer' : x.serverAuth ? 'server' : 'client';
}

/** The spec to reissue under: the existing operator cert's own subject, SANs and usages. */
export function keptSpec(spec: LeafSpec, certPem: string): LeafSpec {
  const i = inspect(certPem);
  return { ...spec, cn: i.cn, o: i.o, dns: i.dns, ips: i.ips, usage: usageOf(i) };
}

export function publicPemOf(keyPem: string): string {
  return createPublicKey(createPrivateKey(keyPem))
    .export({ type: 'spki', format: 'pem' })
    .toString();
}

export interface RenewedLeaf {
  leafId: string;
  host?: string;
  /** Operator-side cert file. */
  file: string;
  notBefore: string;
  notAfter: string;
  keptKey: boolean;
}

/** Leaf specs (per-host ones expanded) for the given operator leaf ids. */
export function specsFor(inv: Inventory, leafIds: string[]): LeafSpec[] {
  return allLeaves(inv).filter((s) => leafIds.includes(s.id));
}

/** Reissues the operator copies of the given leaves; the CA is only read. */
export async function renewOperatorCopies(
  stateDir: string,
  inv: Inventory,
  leafIds: string[],
  opts: { newKey: boolean; log: Logger },
): Promise<RenewedLeaf[]> {
  const before = caFingerprints(stateDir, inv);
  const dir = pkiDir(stateDir, inv);
  const out: RenewedLeaf[] = [];
  for (const spec of specsFor(inv, leafIds)) {
    const crtPath = join(dir, `${spec.file}.crt`);
    const keyPath = join(dir, `${spec.file}.key`);
    if (!existsSync(crtPath) || !existsSync(keyPath)) {
      throw new StepError(
        'certs renew',
        `${spec.id}${spec.host ? `@${spec.host}` : ''}: no operator copy at ${crtPath}; run "hardwire wire" (or "hardwire pki") to create it`,
      );
    }
    const ca = loadSigner(stateDir, inv, spec.ca);
    const kept = keptSpec(spec, readFileSync(crtPath, 'utf8'));
    const keyPem = readFileSync(keyPath, 'utf8');
    const key = opts.newKey
      ? await newKey(inv.cluster.keyAlgorithm)
      : { keyPem, publicPem: publicPemOf(keyPem) };
    const final = await issueLeaf(kept, ca, windowFor(inv.cluster.certValidity.leafDays), { key });
    if (opts.newKey) writeFileAtomic(keyPath, final.keyPem, 0o600);
    writeFileAtomic(crtPath, final.certPem);
    const x = new X509Certificate(final.certPem);
    out.push({
      leafId: spec.id,
      ...(spec.host ? { host: spec.host } : {}),
      file: crtPath,
      notBefore: new Date(x.validFrom).toISOString(),
      notAfter: new Date(x.validTo).toISOString(),
      keptKey: !opts.newKey,
    });
    opts.log.info(
      `  renewed ${spec.id}${spec.host ? `@${spec.host}` : ''} (${spec.file}.crt) until ${new Date(x.validTo).toISOString()}, ${opts.newKey ? 'new key' : 'same key'}`,
    );
  }
  writeKubeconfigs(stateDir, inv, loadSigner(stateDir, inv, 'ca'));
  const after = caFingerprints(stateDir, inv);
  for (const ca of CAS) {
    if (before.certs[ca.id] !== after.certs[ca.id] || before.keys[ca.id] !== after.keys[ca.id]) {
      throw new StepError(
        'certs renew',
        `CA ${ca.id} changed during renew (${before.certs[ca.id]} -> ${after.certs[ca.id]}); this must never happen, restore it from backup`,
      );
    }
  }
  return out;
}

/** Host paths (cert, key, kubeconfig) that carry the given leaves. */
export function hostPathsFor(inv: Inventory, leafIds: string[]): Map<string, Set<string>> {
  const m = new Map<string, Set<string>>();
  for (const h of inv.hosts) {
    const paths = new Set<string>();
    for (const c of remoteCerts(inv, h).filter((c) => leafIds.includes(c.leafId))) {
      paths.add(c.path);
      if (!c.embedded) paths.add(c.path.replace(/\.crt$/, '.key'));
    }
    m.set(h.name, paths);
  }
  return m;
}

/** Narrows wire's wanted files to the renewed certs, so renew pushes those and nothing else. */
function onlyPaths(paths: Map<string, Set<string>>): Phase {
  return {
    id: 'certs-scope',
    title: 'Limit the push to the renewed certificate files',
    async run(ctx) {
      ctx.wants = ctx.wants.map((w) => ({
        ...w,
        files: w.files.filter((f) => paths.get(w.host)?.has(f.path)),
      }));
    },
  };
}

export interface RestartNeed {
  host: string;
  component: string;
  reasons: string[];
}

export interface PushResult {
  ctx: WireContext;
  restarted: { host: string; unit: string; action: string }[];
  pending: RestartNeed[];
}

/**
 * Runs wire's phases over the renewed files only. With restart, the components that read them are
 * restarted in wire's order (etcd, apiserver, controllers), one host at a time, each with its gate,
 * and every gate must be green. Without, files are pushed and restart markers left for a later wire.
 */
export async function pushRenewed(
  inv: Inventory,
  stateDir: string,
  leafIds: string[],
  opts: { restart: boolean; gateTimeoutMs: number; acceptNewHostKeys: boolean; log: Logger },
): Promise<PushResult> {
  const ctx = newContext(
    inv,
    stateDir,
    clusterStateDir(stateDir, inv),
    { dryRun: false, acceptNewHostKeys: opts.acceptNewHostKeys, gateTimeoutMs: opts.gateTimeoutMs },
    opts.log,
  );
  const scope = onlyPaths(hostPathsFor(inv, leafIds));
  // The scope narrows the wanted files right after they are known (binaries), before the hosts are read.
  const at = PLAN_PHASES.findIndex((p) => p.id === 'binaries') + 1;
  const plan = [...PLAN_PHASES.slice(0, at), scope, ...PLAN_PHASES.slice(at)];
  await runPhases(
    opts.restart
      ? [...plan, snapshotPhase, pushPhase, ...START_PHASES, statusPhase]
      : [...plan, snapshotPhase, pushPhase],
    ctx,
  );
  const pending = opts.restart
    ? []
    : ctx.plan!.hosts.flatMap((h) =>
        h.units
          .filter((u) => u.action === 'restart')
          .map((u) => ({ host: h.host, component: u.component, reasons: u.reasons })),
      );
  return { ctx, restarted: ctx.restarted.map((r) => ({ ...r })), pending };
}
