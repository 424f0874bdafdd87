// How a plane's node reaches the API (issue 41): the server its running kubelet and kube-proxy name
// in their kubeconfigs, read through /proc/<pid>/root as each process sees it, and what answers at
// that address: a control-plane host's own address, a loopback listener on the node (a node-local
// load balancer: KubePrism, k0s's NLLB), or an address no host has as its own (a VIP). Generic: it
// knows nothing of how the plane was made, only its control-plane hosts' addresses.
import { parse as parseYaml } from 'yaml';
import type { Session } from '../../core/transport/index.ts';
import { flagsOf } from './normalize.ts';
import { readNodeProcess } from './node-read.ts';
import { NODE_COMPONENTS, type NodeEndpoint, type NodeProcess } from './node-types.ts';

type Kubeconfig = {
  'current-context'?: string;
  contexts?: { name?: string; context?: { cluster?: string } }[];
  clusters?: { name?: string; cluster?: { server?: string } }[];
};

/** The server of a kubeconfig's current context (its first cluster when it has no context). */
export function serverOf(text: string): string | undefined {
  const kc = (parseYaml(text) ?? {}) as Kubeconfig;
  const ctx = kc.contexts?.find((c) => c.name === kc['current-context'])?.context?.cluster;
  const cluster = kc.clusters?.find((c) => ctx === undefined || c.name === ctx) ?? kc.clusters?.[0];
  return cluster?.cluster?.server;
}

/** host and port of an https URL; IPv6 brackets dropped. */
export function hostPort(server: string): { host: string; port: string } {
  const u = new URL(server);
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port || '443' };
}

const isLoopback = (h: string) => h === 'localhost' || h === '::1' || /^127\./.test(h);

/** Classifies the address the node's clients name, given the plane's control-plane hosts. */
export function classify(
  server: string,
  controlPlanes: { name: string; address: string }[],
  listener?: string,
): Pick<NodeEndpoint, 'kind' | 'target' | 'consequence'> {
  const { host, port } = hostPort(server);
  const n = controlPlanes.length;
  if (isLoopback(host))
    return {
      kind: 'node-local',
      target: `${listener ?? 'no listener found'} on the node's ${host}:${port}`,
      consequence:
        'a balancer on the node itself: it survives losing a control-plane host while it has another live upstream',
    };
  const cp = controlPlanes.find((c) => c.address === host);
  if (cp)
    return {
      kind: 'control-plane host',
      target: `${cp.name}'s own address (${host}:${port})`,
      consequence:
        n > 1
          ? `lost with ${cp.name}: the node's kubelet and kube-proxy lose the API while the other ${n - 1} apiserver(s) still serve`
          : `the plane's only control-plane host: losing it loses the API whatever the endpoint`,
    };
  return {
    kind: 'shared address',
    target: `${host}:${port}, no control-plane host's own address (${controlPlanes.map((c) => c.address).join(', ')}): a VIP`,
    consequence:
      'survives losing a control-plane host when the address moves to a live one (hardwire drill lose-host shows it move)',
  };
}

async function pidOf(s: Pick<Session, 'exec'>, name: string): Promise<number | undefined> {
  const r = await s.exec(['pgrep', '-xo', name], { allowFail: true });
  const pid = Number(r.stdout.trim());
  return r.code === 0 && pid > 0 ? pid : undefined;
}

/** The kubeconfig path a client's argv (or its --config file's clientConnection) names. */
function kubeconfigOf(p: NodeProcess): string | undefined {
  const flagged = flagsOf(p.argv).get('kubeconfig');
  if (flagged) return flagged;
  if (p.config === undefined) return undefined;
  const c = (parseYaml(p.config) ?? {}) as { clientConnection?: { kubeconfig?: string } };
  return c.clientConnection?.kubeconfig || undefined;
}

/** The process listening on the node's loopback port, from `ss -ltnpH`. */
async function listenerOf(s: Pick<Session, 'exec'>, port: string): Promise<string | undefined> {
  const r = await s.exec(['ss', '-ltnpH', `sport = :${port}`], { allowFail: true });
  const m = /users:\(\("([^"]+)",pid=(\d+)/.exec(r.stdout);
  return m ? `${m[1]} (pid ${m[2]})` : undefined;
}

/**
 * Reads the node `s` is connected to. `where` names it in the sources; `controlPlanes` are the plane's
 * control-plane hosts; `setBy` says what in the plane's configuration chose the address.
 */
export async function readNodeEndpoint(
  s: Pick<Session, 'exec'>,
  where: string,
  controlPlanes: { name: string; address: string }[],
  setBy: string,
): Promise<NodeEndpoint> {
  const clients: NodeEndpoint['clients'] = [];
  for (const component of NODE_COMPONENTS) {
    const pid = await pidOf(s, component);
    if (!pid) continue;
    // Its argv and --config file as node-read.ts reads them for the node rows.
    const path = kubeconfigOf(await readNodeProcess(s, pid, where));
    if (!path) continue;
    const r = await s.exec(['cat', `/proc/${pid}/root${path}`], { allowFail: true });
    const server = r.code === 0 ? serverOf(r.stdout) : undefined;
    if (server) clients.push({ component, server, source: `${path} of pid ${pid} on ${where}` });
  }
  const first = clients.find((c) => c.component === 'kubelet') ?? clients[0];
  if (!first)
    return {
      host: where,
      clients,
      kind: 'unknown',
      target: 'no running kubelet or kube-proxy with a kubeconfig',
      consequence: '',
      setBy,
    };
  const { host, port } = hostPort(first.server);
  const listener = isLoopback(host) ? await listenerOf(s, port) : undefined;
  const c = classify(first.server, controlPlanes, listener);
  const others = clients.filter((x) => x.server !== first.server);
  return {
    host: where,
    clients,
    ...c,
    ...(others.length
      ? {
          consequence: `${c.consequence}; ${others.map((o) => `${o.component} names ${o.server}`).join(', ')}`,
        }
      : {}),
    setBy,
  };
}
