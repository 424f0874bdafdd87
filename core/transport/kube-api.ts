// A minimal Kubernetes API client over mTLS, enough for gates, the RBAC bootstrap and smoke tests.
// Credentials come from a kubeconfig with embedded certs (as hardwire writes them).
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { StepError } from '../../lib/errors.ts';

export interface KubeCreds {
  server: string;
  ca: string;
  cert: string;
  key: string;
}

export interface KubeResponse {
  status: number;
  body: string;
  /** The server's clock (its Date header), in ms since the epoch; NaN if absent. */
  serverTime: number;
}

interface KubeconfigDoc {
  clusters?: { cluster: { server: string; 'certificate-authority-data': string } }[];
  users?: { user: { 'client-certificate-data': string; 'client-key-data': string } }[];
}

export function credsFromKubeconfig(path: string): KubeCreds {
  return credsFromKubeconfigText(readFileSync(path, 'utf8'), path);
}

/** The same, from text read elsewhere (a kubeconfig on a host); `path` only names it in errors. */
export function credsFromKubeconfigText(text: string, path: string): KubeCreds {
  const doc = parse(text) as KubeconfigDoc;
  const c = doc.clusters?.[0]?.cluster;
  const u = doc.users?.[0]?.user;
  if (!c || !u) throw new StepError('kubeconfig', `${path} has no cluster or user entry`);
  const d = (s: string) => Buffer.from(s, 'base64').toString('utf8');
  return {
    server: c.server,
    ca: d(c['certificate-authority-data']),
    cert: d(u['client-certificate-data']),
    key: d(u['client-key-data']),
  };
}

export function withServer(creds: KubeCreds, server: string): KubeCreds {
  return { ...creds, server };
}

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  timeoutMs?: number;
}

export function kubeRequest(
  creds: KubeCreds,
  method: string,
  path: string,
  opts: RequestOptions = {},
): Promise<KubeResponse> {
  const url = new URL(path, creds.server);
  const payload =
    opts.body === undefined
      ? undefined
      : typeof opts.body === 'string'
        ? opts.body
        : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method,
        ca: creds.ca,
        cert: creds.cert,
        key: creds.key,
        headers: {
          accept: 'application/json',
          ...(payload !== undefined
            ? {
                'content-type': opts.contentType ?? 'application/json',
                'content-length': Buffer.byteLength(payload),
              }
            : {}),
        },
        timeout: opts.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            serverTime: Date.parse(res.headers.date ?? ''),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`timed out after ${opts.timeoutMs ?? 10_000} ms`)),
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Like kubeRequest, but a non-2xx status (other than those allowed) is a StepError. */
export async function kubeJson<T = unknown>(
  creds: KubeCreds,
  method: string,
  path: string,
  opts: RequestOptions & { allow?: number[] } = {},
): Promise<{ status: number; json: T; serverTime: number }> {
  const r = await kubeRequest(creds, method, path, opts);
  if ((r.status < 200 || r.status > 299) && !(opts.allow ?? []).includes(r.status)) {
    throw new StepError(
      'kube-api',
      `${method} ${path} returned ${r.status}: ${r.body.slice(0, 300)}`,
    );
  }
  return {
    status: r.status,
    json: (r.body ? JSON.parse(r.body) : {}) as T,
    serverTime: r.serverTime,
  };
}

/** Opens a watch and resolves with the first event for which match() is true. */
export function watchFor(
  creds: KubeCreds,
  path: string,
  match: (ev: { type: string; object: { metadata?: { name?: string } } }) => boolean,
  timeoutMs: number,
  onOpen?: () => void,
): Promise<{ type: string; name: string }> {
  const url = new URL(path, creds.server);
  url.searchParams.set('watch', 'true');
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca: creds.ca, cert: creds.cert, key: creds.key }, (res) => {
      if (res.statusCode !== 200)
        return reject(new StepError('kube-watch', `watch ${path} returned ${res.statusCode}`));
      onOpen?.();
      let buf = '';
      res.on('data', (c: Buffer) => {
        buf += c.toString('utf8');
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (!line.trim()) continue;
          const ev = JSON.parse(line) as { type: string; object: { metadata?: { name?: string } } };
          if (match(ev)) {
            clearTimeout(timer);
            req.destroy();
            resolve({ type: ev.type, name: ev.object.metadata?.name ?? '' });
          }
        }
      });
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new StepError('kube-watch', `no matching event on ${path} within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('error', (e) => {
      if (!req.destroyed || e.message !== 'socket hang up') reject(e);
    });
    req.end();
  });
}
