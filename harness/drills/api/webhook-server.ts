// The drills' own HTTPS webhook server (3.C1 admission, 3.C2 conversion). It runs in the drill's
// process on the operator side, bound to this machine's address on the cluster's network (the
// lab's bridge), with a serving cert from a drill CA issued here: never the cluster CA, so breaking
// or deleting it cannot touch the cluster's trust. Every request and every failed TLS handshake
// goes to its own log file, which is the evidence for "the webhook saw it" (or did not).
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { Inventory } from '../../../core/inventory/load.ts';
import { InputError, StepError } from '../../../lib/errors.ts';
import { ipv4ToInt } from '../../../lib/net.ts';
import { issueCa, issueLeaf, windowFor } from '../../../core/pki/issue.ts';
import { convertObject, type ConvertMode } from './convert-objects.ts';
import type { Logger } from '../../../lib/log.ts';
import { baseline, withDrillCtx, type DrillCtx } from './common.ts';

export interface ServerLogLine {
  at: string;
  line: string;
}

export interface DrillServer {
  /** https://address:port */
  base: string;
  /** The drill CA's PEM: what a caBundle must hold. */
  caPem: string;
  logFile: string;
  /** 3.C2's break: what /convert returns from now on. */
  convertMode: ConvertMode;
  lines(): ServerLogLine[];
  close(): Promise<void>;
}

/**
 * Where the drill webhook listens: --listen if given (it must be this machine's), else this
 * machine's address on the network of the first control-plane host (the lab's bridge address).
 * Checked before anything connects, so bad input changes nothing.
 */
export function listenAddressFor(inv: Inventory, listen?: string): string {
  if (listen !== undefined) {
    const mine = Object.values(networkInterfaces())
      .flat()
      .some((a) => a?.address === listen);
    if (!mine)
      throw new InputError(
        '--listen',
        `${listen} is not an address of this machine; pass one that every apiserver can reach, e.g. the lab bridge address`,
      );
    return listen;
  }
  const target = inv.controlPlaneHosts[0]!.address;
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) {
      if (a.family !== 'IPv4' || a.internal) continue;
      // Same network: equal under the interface's netmask.
      const mask = ipv4ToInt(a.netmask);
      if ((ipv4ToInt(a.address) & mask) >>> 0 === (ipv4ToInt(target) & mask) >>> 0)
        return a.address;
    }
  }
  throw new InputError(
    '--listen',
    `this machine has no address on the network of ${inv.controlPlaneHosts[0]!.name} (${target}); pass --listen ADDRESS, an address of this machine that every apiserver can reach`,
  );
}

interface Review {
  apiVersion?: string;
  kind?: string;
  request?: Record<string, unknown> & { uid?: string };
}

export async function startDrillServer(
  dir: string,
  listen: string,
  name: string,
): Promise<DrillServer> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // A fresh drill CA per run: nothing outlives the drill that would need to trust it.
  const ca = await issueCa(
    {
      id: 'ca',
      file: 'drill-ca',
      cn: `hardwire-drill-ca-${name}`,
      why: 'drill webhook trust root',
      placements: [],
    },
    windowFor(1),
  );
  const leaf = await issueLeaf(
    {
      id: 'drill-webhook',
      file: 'drill-webhook',
      ca: 'ca',
      cn: `hardwire-drill-webhook-${name}`,
      o: [],
      usage: 'server',
      dns: [],
      ips: [listen],
      why: 'drill webhook serving cert',
      placements: [],
    },
    ca,
    windowFor(1),
  );
  writeFileSync(join(dir, 'drill-ca.crt'), ca.certPem, { mode: 0o644 });
  writeFileSync(join(dir, 'drill-ca.key'), ca.keyPem, { mode: 0o600 });
  writeFileSync(join(dir, 'webhook.crt'), leaf.certPem, { mode: 0o644 });
  writeFileSync(join(dir, 'webhook.key'), leaf.keyPem, { mode: 0o600 });
  const logFile = join(dir, 'server.log');
  writeFileSync(logFile, '');
  const kept: ServerLogLine[] = [];
  const log = (line: string) => {
    const at = new Date().toISOString();
    kept.push({ at, line });
    appendFileSync(logFile, `${at} ${line}\n`);
  };

  const state = { convertMode: 'correct' as ConvertMode };
  const server: Server = createServer({ cert: leaf.certPem, key: leaf.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const from = req.socket.remoteAddress ?? '?';
      let review: Review;
      try {
        review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
      } catch {
        log(`${from} ${req.method} ${req.url}: body is not JSON`);
        res.writeHead(400).end();
        return;
      }
      const r = review.request ?? {};
      const reply = (body: unknown) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url?.startsWith('/validate') && review.kind === 'AdmissionReview') {
        const kind = (r.kind as { kind?: string } | undefined)?.kind;
        log(
          `${from} AdmissionReview uid=${r.uid} ${String(r.operation)} ${kind} ${String(r.namespace)}/${String(r.name ?? '')} user=${String((r.userInfo as { username?: string } | undefined)?.username)} -> allowed`,
        );
        reply({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: { uid: r.uid, allowed: true },
        });
      } else if (req.url?.startsWith('/convert') && review.kind === 'ConversionReview') {
        const objects = (r.objects as Record<string, unknown>[] | undefined) ?? [];
        const desired = String(r.desiredAPIVersion);
        const names = objects
          .map(
            (o) =>
              `${String((o.apiVersion as string).split('/')[1])}:${String((o.metadata as { name?: string }).name)}`,
          )
          .join(',');
        log(
          `${from} ConversionReview uid=${r.uid} ${objects.length} object(s) [${names}] -> ${desired} (${state.convertMode})`,
        );
        reply({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          response: {
            uid: r.uid,
            result: { status: 'Success' },
            convertedObjects: objects.map((o) => convertObject(o, desired, state.convertMode)),
          },
        });
      } else {
        log(`${from} ${req.method} ${req.url}: not a review this server answers`);
        res.writeHead(404).end();
      }
    });
  });
  // The client side of a broken trust (3.C1) shows here: the apiserver aborts the handshake.
  server.on('tlsClientError', (err, socket) =>
    log(`${socket.remoteAddress ?? '?'} TLS handshake failed: ${err.message}`),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) =>
      reject(new StepError('drill webhook server', `cannot listen on ${listen}: ${e.message}`)),
    );
    server.listen(0, listen, resolve);
  });
  const port = (server.address() as { port: number }).port;
  log(
    `listening on https://${listen}:${port} (serving cert from drill CA hardwire-drill-ca-${name})`,
  );
  return {
    base: `https://${listen}:${port}`,
    caPem: ca.certPem,
    logFile,
    get convertMode() {
      return state.convertMode;
    },
    set convertMode(m: ConvertMode) {
      state.convertMode = m;
      log(`conversion mode -> ${m}`);
    },
    lines: () => [...kept],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The frame of a drill that needs the webhook server: baseline, leftovers of an earlier run removed,
 * the server up for the drill's body and closed however it ends.
 */
export async function webhookDrill<T>(
  inv: Inventory,
  stateDir: string,
  opts: {
    listen?: string | undefined;
    gateTimeoutMs: number;
    acceptNewHostKeys?: boolean | undefined;
  },
  log: Logger,
  name: string,
  mode: string,
  cleanup: (d: DrillCtx) => Promise<void>,
  body: (
    d: DrillCtx,
    server: DrillServer,
    base: Awaited<ReturnType<typeof baseline>>,
  ) => Promise<T>,
): Promise<T> {
  const listen = listenAddressFor(inv, opts.listen);
  return withDrillCtx(inv, stateDir, opts, log, name, async (d) => {
    const base = await baseline(d);
    await cleanup(d);
    const server = await startDrillServer(d.dir, listen, mode);
    try {
      return await body(d, server, base);
    } finally {
      await server.close();
    }
  });
}
