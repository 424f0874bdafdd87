// The hardwire plane: the rendered host tree (unit ExecStart lines, PKI, kubeconfigs) and, when the
// host answers SSH and its units run, the live command lines from /proc/<pid>/cmdline.
import { DEFAULT_GATE_TIMEOUT_MS } from '../../lib/constants.ts';
import { ensurePki } from '../../core/pki/store.ts';
import { renderHostTree, unitPath, type HostTree } from '../../core/render/host-tree.ts';
import { certFacts } from './x509.ts';
import { KUBEADM_TOKENS, execStartArgv, kubeconfigCert, roleOf } from './normalize.ts';
import type { CollectContext, Component, PlaneCollector, PlaneData } from './types.ts';
import { emptyPlane } from './types.ts';
import { parseShow, showArgv } from '../../core/transport/systemctl.ts';
import type { Host, Inventory } from '../../core/inventory/load.ts';
import { readNodeEndpoint } from './node-endpoint.ts';
import type { Session } from '../../core/transport/index.ts';
import { readLiveNode, renderedNode } from './hardwire-node.ts';
import { NODE_COMPONENTS } from './node-types.ts';
import { readKubeletCerts } from './kubelet-certs.ts';
import { clusterStateDir } from '../../core/pki/store.ts';
import { adminCreds } from '../../core/apply/creds.ts';
import { PROBE_NS, probeName } from '../../core/gates/pods.ts';
import { watchTtfp } from './ttfp-watch.ts';
import { hardwireChecks } from './ttfp-checks.ts';
import { readPlaneProcs } from './proc-read.ts';
import { unitOf } from '../../lib/unit.ts';

export interface HardwireOptions {
  host: Host;
  /** Read the running units over SSH (default true); false uses the rendered tree only. */
  live: boolean;
  /** Wire the cluster first (the lab given bare), so its time to first Pod is measured in this run. */
  wire?: () => Promise<void>;
}

/**
 * The first worker's probe Pod (wire's workload gate) Running on it, watched from t0 (now) through
 * `wire` when given; without it the watcher only finds the plane already installed (not bare).
 */
async function watchWire(
  plane: PlaneData,
  ctx: CollectContext,
  wire: (() => Promise<void>) | undefined,
): Promise<void> {
  const worker = ctx.inv.workerHosts[0];
  if (!worker) {
    plane.notes.push('no worker host in the inventory: no Pod to watch, so the plane is not whole');
    return;
  }
  const { connect } = await import('../../core/transport/index.ts');
  const s = await connect(ctx.inv.hosts.find((h) => h.isControlPlane)!, {
    ...(ctx.inv.knownHostsFile ? { knownHostsFile: ctx.inv.knownHostsFile } : {}),
    acceptNewHostKeys: ctx.acceptNewHostKeys === true,
    timeoutMs: 8000,
  });
  const dir = clusterStateDir(ctx.stateDir, ctx.inv);
  const watch = watchTtfp(
    hardwireChecks(s, '/etc/kubernetes/pki/apiserver.crt', () => adminCreds(dir), worker.name, {
      ns: PROBE_NS,
      name: probeName(worker.name),
    }),
    { worker: worker.name, pod: `${PROBE_NS}/${probeName(worker.name)}` },
  );
  try {
    if (wire) await wire();
  } finally {
    plane.ttfp = await watch.finish(wire ? 30_000 : 15_000);
    await s.close();
  }
}

/**
 * The rendered tree's certificates, commands and units. `worker`: the worker host's tree beside the
 * compared control-plane host's, which adds only the certificates of roles that host lacks (the
 * kubelet's and kube-proxy's kubeconfigs) and its units, named with their host.
 */
function fromTree(plane: PlaneData, tree: HostTree, worker = false): void {
  const add = (c: PlaneData['certs'][number]) => {
    if (!worker || !plane.certs.some((x) => x.role === c.role)) plane.certs.push(c);
  };
  for (const f of tree.files) {
    if (f.path.startsWith('/etc/kubernetes/') && f.path.endsWith('.crt')) {
      const rel = f.path.slice('/etc/kubernetes/'.length);
      add({
        role: roleOf(rel),
        path: f.path,
        kind: 'cert',
        facts: certFacts(f.content.toString('utf8')),
      });
    } else if (/^\/etc\/kubernetes\/[^/]+\.conf$/.test(f.path)) {
      const rel = f.path.slice('/etc/kubernetes/'.length);
      const c = kubeconfigCert(f.content.toString('utf8'), f.path, roleOf(rel));
      if (c) add(c);
    }
  }
  for (const m of tree.models) {
    const unit = tree.files.find((f) => f.path === unitPath(m.component))!;
    plane.commands[m.component] = {
      argv: execStartArgv(unit.content.toString('utf8')),
      source: `rendered ${unitPath(m.component)} (ExecStart)${worker ? ` on ${tree.host.name}` : ''}`,
    };
    plane.flagReasons[m.component] = Object.fromEntries(
      m.flags.map((f) => [f.name, { text: f.why, url: `components/models/${m.component}.ts` }]),
    );
    plane.processes.push({
      name: unitOf(m.component),
      kind: 'systemd-unit',
      parent: `systemd (PID 1)${worker ? ` on ${tree.host.name}` : ''}`,
      source: `rendered ${unitPath(m.component)}`,
      details: {
        binary: m.binary,
        'Type=': m.type,
        'Restart=': 'on-failure',
        runs: `directly on ${tree.host.name}, as root, no container`,
      },
    });
  }
}

/** What compare shows of each live unit. */
const SHOWN = ['MainPID', 'ActiveState', 'SubState', 'User', 'NRestarts', 'ControlGroup'];

/** Each unit of `tree` on its host: systemctl's state and, when it runs, its live argv from /proc. Returns the running ones. */
async function showUnits(plane: PlaneData, s: Session, tree: HostTree): Promise<string[]> {
  const running: string[] = [];
  for (const c of tree.components) {
    const unit = unitOf(c);
    const t1 = performance.now();
    const show = await s.exec(showArgv([unit], SHOWN), { allowFail: true });
    const props = parseShow(show.stdout)[0] ?? {};
    const pid = Number(props.MainPID ?? 0);
    const p = plane.processes.find((x) => x.name === unit)!;
    p.state = `${props.ActiveState ?? '?'}/${props.SubState ?? '?'}`;
    p.source = `systemctl show ${unit} on ${tree.host.name}`;
    p.details = {
      ...p.details,
      User: props.User || 'root',
      NRestarts: props.NRestarts ?? '',
      ControlGroup: props.ControlGroup ?? '',
    };
    if (pid > 0 && props.ActiveState === 'active') {
      const cl = await s.exec(['cat', `/proc/${pid}/cmdline`], { allowFail: true });
      const argv = cl.stdout.split('\0').filter((w, i, a) => !(i === a.length - 1 && w === ''));
      if (cl.code === 0 && argv.length > 0) {
        const rendered = plane.commands[c as Component]!.argv;
        if (rendered.join('\0') !== argv.join('\0'))
          plane.notes.push(
            `${unit}: the live command line differs from the rendered unit (re-run "hardwire wire")`,
          );
        plane.commands[c as Component] = {
          argv,
          source: `/proc/${pid}/cmdline on ${tree.host.name}`,
        };
        p.pid = pid;
        running.push(c);
      }
    }
    plane.steps.push({
      step: `systemctl show ${unit}${tree.host.name === plane.host ? '' : ` on ${tree.host.name}`}`,
      argv: showArgv([unit], SHOWN),
      ms: Math.round(performance.now() - t1),
      ok: show.code === 0,
      output: p.state,
    });
  }
  if (running.length < tree.components.length) {
    plane.notes.push(
      `not running on ${tree.host.name}: ${tree.components.filter((c) => !running.includes(c)).join(', ')}; their flags come from the rendered units (run "hardwire wire" for live command lines)`,
    );
  }
  return running;
}

/** What in the inventory chose the address the nodes' kubeconfigs name. */
export function endpointSetBy(inv: Inventory): string {
  const vip = inv.cluster.apiServerVip;
  if (vip)
    return `cluster.apiServerVip ${vip.address} on ${vip.interface}: kube-vip on each control-plane host holds it in turn (Lease kube-system/plndr-cp-lock)`;
  if (inv.cluster.apiServerEndpoint)
    return `cluster.apiServerEndpoint ${inv.cluster.apiServerEndpoint}: a load balancer the inventory names`;
  return "neither cluster.apiServerVip nor cluster.apiServerEndpoint: the first control-plane host's address";
}

/** The node rows and the kubelet's certificates, read on the worker host `s` is connected to (plane.node.host). */
async function readNode(plane: PlaneData, s: Session, inv: Inventory): Promise<void> {
  if (!plane.node) return;
  const t4 = performance.now();
  plane.nodeEndpoint = await readNodeEndpoint(
    s,
    s.host.name,
    inv.hosts.filter((h) => h.isControlPlane),
    endpointSetBy(inv),
  );
  plane.steps.push({
    step: `read the API server the kubelet and kube-proxy name on ${s.host.name}`,
    ms: Math.round(performance.now() - t4),
    ok: plane.nodeEndpoint.kind !== 'unknown',
    output: plane.nodeEndpoint.clients.map((c) => `${c.component}: ${c.server}`).join('\n'),
  });
  const pids = Object.fromEntries(
    NODE_COMPONENTS.map((c) => [c, plane.processes.find((x) => x.name === unitOf(c))?.pid]),
  );
  const t2 = performance.now();
  const read = await readLiveNode(plane.node, s, pids);
  plane.steps.push({
    step: `read the kubelet and kube-proxy (argv, config) on ${s.host.name} for the node rows`,
    ms: Math.round(performance.now() - t2),
    ok: read.length === NODE_COMPONENTS.length,
    output: read.join(', '),
  });
  if (plane.node.components.kubelet && plane.commands['kube-apiserver']) {
    const t3 = performance.now();
    plane.kubeletCerts = await readKubeletCerts(plane, s, plane.commands['kube-apiserver']);
    plane.steps.push({
      step: `read the kubelet's client and serving certificates on ${s.host.name}`,
      ms: Math.round(performance.now() - t3),
      ok: true,
      output: plane.kubeletCerts.verdict,
    });
  }
}

async function live(
  plane: PlaneData,
  tree: HostTree,
  workerTree: HostTree | undefined,
  ctx: CollectContext,
): Promise<void> {
  const { connect } = await import('../../core/transport/index.ts');
  const opts = {
    ...(ctx.inv.knownHostsFile ? { knownHostsFile: ctx.inv.knownHostsFile } : {}),
    acceptNewHostKeys: ctx.acceptNewHostKeys === true,
    timeoutMs: 8000,
  };
  const t0 = performance.now();
  const s = await connect(tree.host, opts);
  try {
    plane.steps.push({
      step: `ssh ${tree.host.name}`,
      ms: Math.round(performance.now() - t0),
      ok: true,
    });
    const running = await showUnits(plane, s, tree);
    // The host's files should be the rendered ones, byte for byte.
    const certPaths = plane.certs
      .map((c) => c.path)
      .filter((path) => tree.files.some((f) => f.path === path));
    const hashes = await s.sha256Many(certPaths);
    const drift = tree.files
      .filter((f) => certPaths.includes(f.path) && hashes.get(f.path) !== f.sha256)
      .map((f) => f.path);
    if (drift.length)
      plane.notes.push(
        `on ${tree.host.name}, ${drift.length} PKI file(s) differ from the rendered tree: ${drift.join(', ')}`,
      );
    if (workerTree && workerTree !== tree) {
      // The worker is a host of its own (node2 in compare's lab): its units, node rows and kubelet certs are read there.
      const ws = await connect(workerTree.host, opts);
      try {
        await showUnits(plane, ws, workerTree);
        await readNode(plane, ws, ctx.inv);
      } finally {
        await ws.close();
      }
    } else {
      await readNode(plane, s, ctx.inv);
    }
    plane.nodeProcs = await hostsProcs(s, tree.host, ctx, plane);
    plane.mode =
      running.length === tree.components.length
        ? 'live'
        : running.length
          ? 'partly live'
          : 'rendered';
  } finally {
    await s.close();
  }
}

const rolesOf = (h: Host) =>
  [h.isEtcd ? 'etcd' : '', h.isControlPlane ? 'control plane' : '', h.isWorker ? 'worker' : '']
    .filter(Boolean)
    .join(', ');

/** Every host of the inventory's process tree: the compared one through its open session, the others each through one of their own. */
async function hostsProcs(
  s: Session,
  host: Host,
  ctx: CollectContext,
  plane: PlaneData,
): Promise<NonNullable<PlaneData['nodeProcs']>> {
  const { connect } = await import('../../core/transport/index.ts');
  const out = await readPlaneProcs([{ s, host: host.name, role: rolesOf(host) }], plane);
  for (const h of ctx.inv.hosts.filter((x) => x.name !== host.name)) {
    try {
      const o = await connect(h, {
        ...(ctx.inv.knownHostsFile ? { knownHostsFile: ctx.inv.knownHostsFile } : {}),
        acceptNewHostKeys: ctx.acceptNewHostKeys === true,
        timeoutMs: 8000,
      });
      try {
        out.push(...(await readPlaneProcs([{ s: o, host: h.name, role: rolesOf(h) }], plane)));
      } finally {
        await o.close();
      }
    } catch (err) {
      plane.notes.push(`process tree of ${h.name} not read: ${(err as Error).message}`);
    }
  }
  return out;
}

export function hardwireCollector(opts: HardwireOptions): PlaneCollector {
  return {
    plane: 'hardwire',
    async collect(ctx) {
      const plane = emptyPlane('hardwire', '', true);
      plane.host = opts.host.name;
      plane.version = ctx.params.kubernetesVersion;
      plane.pathTokens = [...KUBEADM_TOKENS, [opts.host.address, '<host-address>']];
      plane.mode = 'rendered';
      if (opts.live) {
        // Before the PKI is loaded or made: time to first Pod starts at the bare lab.
        if (opts.wire)
          ctx.log.step('wiring the hardwire plane from the bare lab (time to first Pod)');
        await watchWire(plane, ctx, opts.wire);
      }
      const t0 = performance.now();
      const pki = await ensurePki(ctx.stateDir, ctx.inv);
      const tree = renderHostTree(ctx.inv, opts.host, pki.dir);
      // The node rows' host: the inventory's first worker, node2 in compare's lab, where node1 (the
      // compared control-plane host) runs no kubelet; the same tree when the compared host is a worker too.
      const worker = ctx.inv.workerHosts[0];
      const workerTree = !worker
        ? undefined
        : worker.name === opts.host.name
          ? tree
          : renderHostTree(ctx.inv, worker, pki.dir);
      plane.steps.push({
        step: 'load PKI and render host tree',
        ms: Math.round(performance.now() - t0),
        ok: true,
        output: `${tree.files.length} files for ${opts.host.name}${workerTree && workerTree !== tree ? `, ${workerTree.files.length} for worker ${workerTree.host.name}` : ''}`,
      });
      fromTree(plane, tree);
      if (workerTree && workerTree !== tree) fromTree(plane, workerTree, true);
      const node = workerTree ? renderedNode(workerTree) : undefined;
      if (node) plane.node = node;
      if (opts.live) {
        try {
          await live(plane, tree, workerTree, ctx);
        } catch (err) {
          plane.notes.push(
            `live read of ${opts.host.name} failed (${err instanceof Error ? err.message : String(err)}); flags come from the rendered units`,
          );
        }
      } else {
        plane.notes.push(
          '--no-live: flags come from the rendered units, not from running processes',
        );
      }
      if (ctx.cis && plane.mode === 'live') {
        const { scanHardwire } = await import('../cis/index.ts');
        plane.cis = await scanHardwire(
          ctx.inv,
          ctx.stateDir,
          {
            acceptNewHostKeys: ctx.acceptNewHostKeys === true,
            gateTimeoutMs: ctx.gateTimeoutMs ?? DEFAULT_GATE_TIMEOUT_MS,
          },
          ctx.log,
        );
      }
      plane.why =
        plane.mode === 'live'
          ? `rendered host tree of ${opts.host.name} and live /proc/<pid>/cmdline of its ${tree.components.length} units`
          : `rendered host tree of ${opts.host.name} (${opts.live ? 'units not running or host not reachable' : '--no-live'})`;
      return plane;
    },
  };
}
