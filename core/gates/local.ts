// What a gate can see of one component on one host: its unit's state and restart count, and its
// loopback-only /healthz, reached through the SSH connection (no curl needed on the host).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import type { ReadSession } from '../transport/index.ts';
import { showUnit } from '../transport/systemctl.ts';

export interface UnitState {
  active: string;
  sub: string;
  nRestarts: number;
}

export async function unitState(s: ReadSession, unit: string): Promise<UnitState> {
  const v = await showUnit(s, unit, ['ActiveState', 'SubState', 'NRestarts'], {
    timeoutMs: 15_000,
  });
  return {
    active: v.ActiveState ?? 'unknown',
    sub: v.SubState ?? 'unknown',
    nRestarts: Number(v.NRestarts ?? NaN),
  };
}

/**
 * GET https://127.0.0.1:<port>/healthz on the host. The controller-manager and scheduler serve it
 * with a self-signed cert they make at start (no --tls-cert-file), so there is nothing to verify it
 * against; /healthz needs no credentials (--authorization-always-allow-paths defaults to it).
 */
/** `client`: a client certificate to present (a kube-apiserver run with --anonymous-auth=false answers 401 without one). */
export async function localHealthz(
  s: ReadSession,
  port: number,
  timeoutMs = 5000,
  path = '/healthz',
  client?: { cert: string; key: string },
): Promise<{ status: number; body: string }> {
  const stream = await s.openLocalPort(port);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'GET',
        timeout: timeoutMs,
        createConnection: () =>
          tlsConnect({
            socket: stream,
            rejectUnauthorized: false,
            ...(client ? { cert: client.cert, key: client.key } : {}),
          }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          stream.end();
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8').trim(),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`${path} on 127.0.0.1:${port} timed out after ${timeoutMs} ms`)),
    );
    req.on('error', (err) => {
      stream.end();
      reject(err);
    });
    req.end();
  });
}

/** GET http://127.0.0.1:<port><path> on the host, plain HTTP (kube-proxy's /healthz on 10256). */
export async function localHttp(
  s: ReadSession,
  port: number,
  path: string,
  timeoutMs = 5000,
): Promise<{ status: number; body: string }> {
  const stream = await s.openLocalPort(port);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'GET',
        timeout: timeoutMs,
        createConnection: () => stream,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          stream.end();
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8').trim(),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`${path} on 127.0.0.1:${port} timed out after ${timeoutMs} ms`)),
    );
    req.on('error', (err) => {
      stream.end();
      reject(err);
    });
    req.end();
  });
}
