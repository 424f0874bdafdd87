// The lab registry's gate: GET https://<its address>:5000/v2/ answers 200, its certificate verified
// with the cluster CA for the host's address (as containerd verifies it), and every image it is to
// serve is there under each of its names. Reached through the SSH connection: the channel opens at
// the host's 127.0.0.1:5000, the TLS session inside it is checked against the address the workers use.
import { request as httpsRequest } from 'node:https';
import { checkServerIdentity, connect as tlsConnect } from 'node:tls';
import { adminCreds } from '../apply/creds.ts';
import type { ReadSession as Session } from '../transport/index.ts';
import { StepError } from '../../lib/errors.ts';
import { retry } from '../../lib/retry.ts';
import { unitOf } from '../../lib/unit.ts';
import { journalTail } from './journal.ts';
import { unitState } from './local.ts';
import { POLL_MS } from './wait.ts';
import type { Gate, GateContext } from '../components/registry/types.ts';
import { REGISTRY_PORT } from '../components/models/registry.ts';
import { servedImages } from '../components/images.ts';
import type { AddonName } from '../inventory/schema.ts';

/** GET path on the registry of the host `s` reaches, verified with `ca` as `address`; JSON parsed when it is JSON. */
export async function registryGet(
  s: Session,
  address: string,
  ca: string,
  path: string,
  method: 'GET' | 'HEAD' = 'GET',
  timeoutMs = 5000,
): Promise<{
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}> {
  const stream = await s.openLocalPort(REGISTRY_PORT);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: address,
        port: REGISTRY_PORT,
        path,
        method,
        timeout: timeoutMs,
        headers: {
          accept:
            'application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json, application/json',
        },
        createConnection: () =>
          tlsConnect({
            socket: stream,
            ca,
            servername: /^[\d.]+$/.test(address) ? '' : address,
            checkServerIdentity: (_host, cert) => checkServerIdentity(address, cert),
          }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          stream.end();
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            headers: res.headers,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(
        new Error(
          `${method} ${path} on ${address}:${REGISTRY_PORT} timed out after ${timeoutMs} ms`,
        ),
      ),
    );
    req.on('error', (err) => {
      stream.end();
      reject(err);
    });
    req.end();
  });
}

/** /v2/ answers 200 through the CA, and each image (the addons' too) is there under each name it is pushed as. */
export async function registryServes(
  s: Session,
  address: string,
  ca: string,
  addons: readonly AddonName[],
): Promise<string> {
  const base = await registryGet(s, address, ca, '/v2/');
  if (base.status !== 200) throw new Error(`GET /v2/ answered ${base.status}: ${base.body.trim()}`);
  const names = Object.values(servedImages(addons)).flatMap((i) => [...i.as]);
  const missing: string[] = [];
  for (const n of names) {
    const [repo, tag] = n.split(':') as [string, string];
    const m = await registryGet(s, address, ca, `/v2/${repo}/manifests/${tag}`, 'HEAD');
    if (m.status !== 200) missing.push(`${n} (${m.status})`);
  }
  if (missing.length > 0) throw new Error(`the registry does not serve ${missing.join(', ')}`);
  return `GET https://${address}:${REGISTRY_PORT}/v2/ 200 (cluster CA), serves ${names.join(', ')}`;
}

function registryHost(ctx: GateContext) {
  return ctx.inv.hosts.find((h) => h.isRegistry);
}

export const registryGate: Gate = {
  proves: `GET https://<address>:${REGISTRY_PORT}/v2/ answers 200, verified with the cluster CA, and every image it serves is there under each name it is pushed as (docker.io's, and an addon's registry.k8s.io's)`,
  async wait(ctx, hosts) {
    const h = registryHost(ctx);
    if (!h || (hosts.length > 0 && !hosts.includes(h.name))) return;
    const s = ctx.sessions.get(h.name);
    if (!s) throw new Error(`no SSH session for ${h.name}`);
    const ca = adminCreds(ctx.clusterDir).ca;
    const line = await retry(
      async () => {
        const u = await unitState(s, unitOf('registry'));
        if (u.active === 'failed') throw new Error(`${unitOf('registry')} is failed (${u.sub})`);
        return registryServes(s, h.address, ca, ctx.inv.addons);
      },
      {
        timeoutMs: ctx.opts.gateTimeoutMs,
        intervalMs: POLL_MS * 4,
        startBeforeDeadline: true,
        onTimeout: async (last) => {
          throw new StepError(
            'gate registry',
            last instanceof Error ? last.message : String(last),
            {
              host: h.name,
              detail: await journalTail(s, unitOf('registry')),
            },
          );
        },
      },
    );
    ctx.log.info(`  registry on ${h.name}: ${line}`);
  },
  checks: (ctx) => {
    const h = registryHost(ctx);
    return h
      ? [
          {
            name: `registry ${h.name}: /v2/ through the cluster CA, images served`,
            run: () =>
              registryServes(
                ctx.sessions.get(h.name)!,
                h.address,
                adminCreds(ctx.clusterDir).ca,
                ctx.inv.addons,
              ),
          },
        ]
      : [];
  },
};

/** What the registry serves: each repository of /v2/_catalog with its /v2/<name>/tags/list. */
export interface ServedRepository {
  /** The repository in the registry (library/nginx). */
  repository: string;
  /** The name containerd asks docker.io for, which the mirror answers (docker.io/library/nginx). */
  image: string;
  tags: string[];
}

function jsonOf<T>(r: { status: number; body: string }, what: string): T {
  if (r.status !== 200) throw new Error(`${what} answered ${r.status}: ${r.body.trim()}`);
  try {
    return JSON.parse(r.body) as T;
  } catch {
    throw new Error(`${what} answered 200 with a body that is not JSON: ${r.body.slice(0, 80)}`);
  }
}

export async function registryCatalog(
  s: Session,
  address: string,
  ca: string,
): Promise<ServedRepository[]> {
  const cat = jsonOf<{ repositories?: string[] }>(
    await registryGet(s, address, ca, '/v2/_catalog?n=1000'),
    'GET /v2/_catalog',
  );
  const out: ServedRepository[] = [];
  for (const repository of cat.repositories ?? []) {
    const t = jsonOf<{ tags?: string[] | null }>(
      await registryGet(s, address, ca, `/v2/${repository}/tags/list`),
      `GET /v2/${repository}/tags/list`,
    );
    out.push({ repository, image: `docker.io/${repository}`, tags: [...(t.tags ?? [])].sort() });
  }
  return out;
}
