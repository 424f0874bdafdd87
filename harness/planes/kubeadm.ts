// The kubeadm plane: on a fresh worker lab host with containerd and the kubelet (kubeadm-node.ts),
// the real kubeadm at the pinned version runs `kubeadm init` with every phase and a generated
// kubeadm.yaml; the kubelet runs its static Pods from images built here. Then its manifests, PKI,
// kubeconfigs and what runs live (kubeadm-init.ts) are read back.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { StepError } from '../../lib/errors.ts';
import { goModCache } from '../../core/components/binaries/go-env.ts';
import { certFacts } from './x509.ts';
import { readKubeletCerts } from './kubelet-certs.ts';
import { KUBEADM_TOKENS, kubeconfigCert, roleOf } from './normalize.ts';
import { labDir } from '../lab/index.ts';
import type { ClusterParams, Component, PlaneCollector, PlaneData } from './types.ts';
import { COMPONENTS, emptyPlane } from './types.ts';
import type { Session } from '../../core/transport/index.ts';
import { APISERVER_PORT } from '../../lib/constants.ts';
import { prepareKubeadmNode } from './kubeadm-node.ts';
import {
  INIT_CONFIG,
  kubeadmInit,
  kubeletDocument,
  kubeProxyDocument,
  nodeRegistration,
  readKubeadmLive,
} from './kubeadm-init.ts';
import { scanLabHost } from '../cis/index.ts';
import { FIRST_POD, firstPod, waitAddons } from './kubeadm-pod.ts';
import { WORKER_POD, joinWorker } from './kubeadm-join.ts';
import { readKubeadmNodes } from './kubeadm-nodes.ts';
import { joinControlPlane } from './kubeadm-join-cp.ts';
import { readNodeEndpoint } from './node-endpoint.ts';
import { readKubeadmNode } from './kubeadm-node-rows.ts';
import { kubeadmComponentArgs } from './kubeadm-extra-args.ts';
import { kubeadmUpgradePlan } from './kubeadm-upgrade.ts';
import { watchTtfp } from './ttfp-watch.ts';
import { hostChecks } from './ttfp-checks.ts';
import {
  rowOf,
  type ControlPlaneName,
  type PerComponent,
} from '../../core/components/registry/index.ts';

/**
 * ClusterConfiguration + InitConfiguration with the same parameters as the hardwire plane; with
 * `node`, the nodeRegistration and KubeletConfiguration a full `kubeadm init` on a lab host needs.
 */
export function kubeadmConfig(p: ClusterParams, node = false): string {
  const init = {
    apiVersion: 'kubeadm.k8s.io/v1beta4',
    kind: 'InitConfiguration',
    localAPIEndpoint: { advertiseAddress: p.advertiseAddress, bindPort: APISERVER_PORT },
    nodeRegistration: node
      ? nodeRegistration(p.nodeName, p.advertiseAddress)
      : { name: p.nodeName },
  };
  const cluster = {
    apiVersion: 'kubeadm.k8s.io/v1beta4',
    kind: 'ClusterConfiguration',
    kubernetesVersion: p.kubernetesVersion,
    clusterName: p.clusterName,
    ...(p.controlPlaneEndpoint ? { controlPlaneEndpoint: p.controlPlaneEndpoint } : {}),
    networking: { serviceSubnet: p.serviceCIDR, podSubnet: p.podCIDR, dnsDomain: p.dnsDomain },
    ...kubeadmComponentArgs(p),
  };
  return `${stringify(init)}---\n${stringify(cluster)}${node ? `---\n${kubeletDocument()}---\n${kubeProxyDocument()}` : ''}`;
}

/**
 * The i-th /24 of the pod subnet: the range kube-controller-manager gives the i-th node to register
 * (node-cidr-mask-size 24): node1's, which registers during init before any join. A joined node's
 * range is read from its Node (kubeadm-join.ts), not assumed.
 */
export function nodeRange(podCIDR: string, i: number): string {
  const [a, b, c] = podCIDR.split('/')[0]!.split('.').map(Number) as [number, number, number];
  const n = (a << 16) + (b << 8) + c + i;
  return `${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}.0/24`;
}

/** Where kubeadm builds each component's command line, in its source at the tag (kubeadm has no builder for a component it does not run). */
const COMMAND_FUNCS: PerComponent<{ file: string; func: string }, ControlPlaneName> = {
  etcd: { file: 'cmd/kubeadm/app/phases/etcd/local.go', func: 'getEtcdCommand' },
  'kube-apiserver': {
    file: 'cmd/kubeadm/app/phases/controlplane/manifests.go',
    func: 'getAPIServerCommand',
  },
  'kube-controller-manager': {
    file: 'cmd/kubeadm/app/phases/controlplane/manifests.go',
    func: 'getControllerManagerCommand',
  },
  'kube-scheduler': {
    file: 'cmd/kubeadm/app/phases/controlplane/manifests.go',
    func: 'getSchedulerCommand',
  },
};

/**
 * For each flag name kubeadm's source spells out in a component's command builder: the line that
 * sets it (and the comment above it, if any), linked at the tag. Read from the kubernetes module
 * in the Go module cache (present once kubeadm was built); empty when the source is not there.
 */
export function kubeadmSourceReasons(
  version: string,
  component: Component,
): Record<string, { text: string; url: string }> {
  const where = rowOf(COMMAND_FUNCS, component);
  if (!where) return {};
  const { file, func } = where;
  const path = join(goModCache(), 'k8s.io', `kubernetes@${version}`, file);
  if (!existsSync(path)) return {};
  const lines = readFileSync(path, 'utf8').split('\n');
  const start = lines.findIndex((l) => l.startsWith(`func ${func}(`));
  if (start < 0) return {};
  let end = start + 1;
  while (end < lines.length && lines[end] !== '}') end++;
  const out: Record<string, { text: string; url: string }> = {};
  for (let i = start; i < end; i++) {
    for (const m of lines[i]!.matchAll(/"([a-z][a-z0-9-]+)"/g)) {
      const name = m[1]!;
      if (out[name] || !/Name: "|GetArgValue|SetArgValues/.test(lines[i]!)) continue;
      let comment = '';
      for (let j = i - 1; j > start && /^\s*\/\//.test(lines[j]!); j--)
        comment = `${lines[j]!.trim().replace(/^\/\/\s*/, '')} ${comment}`;
      const code = lines[i]!.trim();
      out[name] = {
        text: `kubeadm ${func} (${file.split('/').pop()}:${i + 1}): ${code}${comment ? ` // ${comment.trim()}` : ''}`,
        url: `https://github.com/kubernetes/kubernetes/blob/${version}/${file}#L${i + 1}`,
      };
    }
  }
  return out;
}

interface Manifest {
  metadata?: { name?: string; annotations?: Record<string, string> };
  spec?: {
    hostNetwork?: boolean;
    priorityClassName?: string;
    containers?: {
      name?: string;
      image?: string;
      command?: string[];
      args?: string[];
      resources?: { requests?: Record<string, string> };
      livenessProbe?: { httpGet?: { path?: string; port?: unknown; scheme?: string } };
    }[];
    volumes?: { name?: string; hostPath?: { path?: string } }[];
  };
}

export interface KubeadmOptions {
  /** Name of the lab the collector creates (fresh: removed first) for this run. */
  lab: string;
  /** Leave the lab up afterwards (for inspection). */
  keep: boolean;
  /** Workers to `kubeadm join` (0 or 1): each a lab host of its own, with a Pod scheduled onto it. */
  workers?: number;
  /** compare --upgrade-to: run that version's real `kubeadm upgrade plan` on the host (kubeadm-upgrade.ts). */
  upgrade?: string;
  /**
   * Control-plane members to `kubeadm join --control-plane` after the workers (0 or 1), on a lab host
   * of their own. init then sets controlPlaneEndpoint to the first node's address and port (kubeadm
   * refuses a control-plane join without one); that is the address every kubeconfig names anyway.
   */
  controlPlanes?: number;
}

async function run(
  plane: PlaneData,
  s: Session,
  argv: string[],
  step: string,
  timeoutMs = 180_000,
): Promise<string> {
  const t0 = performance.now();
  const r = await s.exec(argv, { allowFail: true, timeoutMs });
  const ms = Math.round(performance.now() - t0);
  const out = `${r.stdout}${r.stderr}`.trim();
  plane.steps.push({
    step,
    argv,
    ms,
    ok: r.code === 0,
    output: out.split('\n').slice(-6).join('\n'),
  });
  if (r.code !== 0)
    throw new StepError('compare-kubeadm', `${argv.join(' ')} exited ${r.code}`, {
      host: s.host.name,
      detail: out.split('\n').slice(-15),
    });
  return r.stdout;
}

export function kubeadmCollector(opts: KubeadmOptions): PlaneCollector {
  return {
    plane: 'kubeadm',
    async collect(ctx) {
      const plane = emptyPlane('kubeadm', '', true);
      const lab = await import('../lab/index.ts');
      const labOpts = { name: opts.lab, stateDir: ctx.stateDir, log: ctx.log };
      const hosts = 1 + (opts.workers ?? 0) + (opts.controlPlanes ?? 0);
      ctx.log.step(`kubeadm plane: fresh lab "${opts.lab}" (${hosts} host${hosts > 1 ? 's' : ''})`);
      let t0 = performance.now();
      const bare = t0;
      await lab.labDown(labOpts);
      let info: Awaited<ReturnType<typeof lab.labUp>>;
      try {
        info = await lab.labUp({ ...labOpts, hosts, workers: true });
      } catch (err) {
        // A host that dies during boot (seen once under load): start over once, and say so.
        const consoleLog = join(labDir(opts.lab, ctx.stateDir), 'hosts', 'node1', 'console.log');
        const tail = existsSync(consoleLog)
          ? readFileSync(consoleLog, 'utf8').trim().split('\n').slice(-8).join(' | ')
          : '';
        plane.notes.push(
          `lab "${opts.lab}" failed to boot once (${err instanceof Error ? err.message : String(err)})${tail ? `; console: ${tail}` : ''}; recreated it`,
        );
        ctx.log.warn(plane.notes[plane.notes.length - 1]!);
        await lab.labDown(labOpts);
        info = await lab.labUp({ ...labOpts, hosts, workers: true });
      }
      const host = info.hosts[0]!;
      plane.steps.push({
        step: `fresh lab "${opts.lab}" up`,
        ms: Math.round(performance.now() - t0),
        ok: true,
        output: `${host.name} ${host.address}`,
      });
      plane.host = `${opts.lab}/${host.name}`;
      const s = await lab.labConnect(host.name, labOpts);
      // Time to first Pod: t0 is now (hosts up, nothing installed); a session of its own polls node1.
      const ws = await lab.labConnect(host.name, labOpts);
      const workerName = opts.workers ? info.hosts[1]!.name : host.name;
      const wHost = opts.workers ? info.hosts[1] : undefined;
      let wSession: Session | undefined;
      let workerPrepared: Promise<void> | undefined;
      const watch = watchTtfp(
        hostChecks(
          ws,
          '/etc/kubernetes/pki/apiserver.crt',
          ['kubectl', '--kubeconfig', '/etc/kubernetes/admin.conf'],
          workerName,
          { ns: 'default', name: opts.workers ? WORKER_POD : FIRST_POD },
        ),
        { worker: workerName, pod: `default/${opts.workers ? WORKER_POD : FIRST_POD}` },
      );
      try {
        const present = await s.exec(['test', '-e', '/etc/kubernetes'], { allowFail: true });
        if (present.code === 0)
          throw new StepError(
            'compare-kubeadm',
            `/etc/kubernetes already exists on a host that should be fresh`,
            { host: host.name },
          );
        t0 = performance.now();
        await s.exec(['mkdir', '-p', '/root/hardwire-compare']);
        // Its own address: etcd and the apiserver bind the advertise address; the node name is the host's.
        const endpoint = opts.controlPlanes
          ? { controlPlaneEndpoint: `${host.address}:${APISERVER_PORT}` }
          : {};
        const config = kubeadmConfig(
          { ...ctx.params, advertiseAddress: host.address, ...endpoint },
          true,
        );
        plane.pathTokens = [...KUBEADM_TOKENS, [host.address, '<host-address>']];
        await s.writeFileAtomic(INIT_CONFIG, config, { mode: 0o600 });
        plane.steps.push({
          step: `write ${INIT_CONFIG}`,
          ms: Math.round(performance.now() - t0),
          ok: true,
          output: config,
        });
        ctx.log.info("  containerd, kubelet and kubeadm's images on the host");
        const imported = await prepareKubeadmNode(
          plane,
          s,
          ctx.params.kubernetesVersion,
          nodeRange(ctx.params.podCIDR, 0),
          ctx.log,
        );
        // The worker's preparation (containerd, runc, CNI, the kubelet and its unit, kube-proxy's and
        // busybox's images: what `kubeadm join` needs on the host) runs from here, beside node1's
        // `kubeadm init`, as an operator prepares every node before joining it. It starts after node1's
        // preparation, not with it: both would build the same image tarballs in the local cache at once.
        // Time to first Pod's phases are the watcher's (ttfp-watch.ts): certs and controlPlaneReady are
        // polled on node1 during init, nodeReady is the worker's Node Ready after its join, podRunning
        // busybox-worker Running on it. With the preparation done beside init, the node phase is the
        // join and the kubelet's bootstrap to Ready, plus whatever of the preparation outlasts init.
        if (wHost) {
          wSession = await lab.labConnect(wHost.name, labOpts);
          workerPrepared = prepareKubeadmNode(
            plane,
            wSession,
            ctx.params.kubernetesVersion,
            undefined,
            ctx.log,
            'worker',
          ).then(() => undefined);
          workerPrepared.catch(() => undefined); // awaited by the join, which reports its failure
        }
        plane.version = (
          await run(plane, s, ['kubeadm', 'version', '-o', 'short'], 'kubeadm version')
        ).trim();
        const init = await kubeadmInit(plane, s, ctx.log);
        const cp = { s, name: host.name, address: host.address };
        // The join right after init, before anything compare reads or waits for on node1 (its
        // manifests, addons, node rows, first Pod): none of that is the operator's path to a worker.
        const worker =
          wHost && wSession && workerPrepared
            ? await joinWorker(
                plane,
                cp,
                { s: wSession, name: wHost.name, address: wHost.address },
                nodeRange(ctx.params.podCIDR, 0),
                workerPrepared,
                ctx.log,
              )
            : undefined;
        // Static Pod manifests: command + args per component, and the Pod facts for the process model.
        const manifests = (
          await run(
            plane,
            s,
            ['find', '/etc/kubernetes/manifests', '-name', '*.yaml'],
            'list manifests',
          )
        )
          .trim()
          .split('\n')
          .filter(Boolean)
          .sort();
        for (const path of manifests) {
          const m = parseYaml((await s.readFile(path)).toString('utf8')) as Manifest;
          const c = m.spec?.containers?.[0];
          const name = m.metadata?.name ?? path;
          if ((COMPONENTS as readonly string[]).includes(name) && c?.command) {
            plane.commands[name as Component] = {
              argv: [...c.command, ...(c.args ?? [])],
              source: `${path} (containers[0].command)`,
            };
          }
          const probe = c?.livenessProbe?.httpGet;
          plane.processes.push({
            name,
            kind: 'static-pod',
            parent: 'kubelet',
            source: path,
            details: {
              image: c?.image ?? '',
              hostNetwork: String(m.spec?.hostNetwork ?? false),
              priorityClassName: m.spec?.priorityClassName ?? '',
              requests: Object.entries(c?.resources?.requests ?? {})
                .map(([k, v]) => `${k}=${v}`)
                .join(','),
              livenessProbe: probe ? `${probe.scheme ?? 'HTTP'} ${probe.path ?? ''}` : '',
              hostPaths: (m.spec?.volumes ?? [])
                .map((v) => v.hostPath?.path)
                .filter(Boolean)
                .join(','),
            },
          });
        }
        plane.processes.unshift({
          name: 'kubelet',
          kind: 'kubelet',
          parent: 'systemd (PID 1)',
          source: '/usr/lib/systemd/system/kubelet.service + kubelet.service.d/10-kubeadm.conf',
          details: {
            runs: `the ${manifests.length} static Pods in /etc/kubernetes/manifests, each in a container under containerd`,
          },
        });
        plane.kubeadm = await readKubeadmLive(plane, s, ctx.params.nodeName, imported, init);
        if (worker) plane.kubeadm.worker = worker;
        plane.kubeadm.addons = await waitAddons(plane, s);
        // The node rows: the kubelet and the kube-proxy container on this host, once kube-proxy is ready.
        const t1 = performance.now();
        plane.node = await readKubeadmNode(
          s,
          host.name,
          plane.kubeadm.kubelet.pid,
          plane.kubeadm.kubelet.flagsEnv,
          ctx.params.kubernetesVersion,
        );
        plane.steps.push({
          step: 'read the kubelet and kube-proxy (argv, config) for the node rows',
          ms: Math.round(performance.now() - t1),
          ok: Boolean(plane.node.components['kube-proxy']),
          output: Object.entries(plane.node.components)
            .map(([c, p]) => `${c}: ${p.argvSource}${p.configSource ? `; ${p.configSource}` : ''}`)
            .join('\n'),
        });
        const api = plane.live?.['kube-apiserver'];
        const t2 = performance.now();
        plane.kubeletCerts = await readKubeletCerts(plane, s, {
          argv: api?.argv ?? [],
          source: api ? `/proc/${api.pid}/cmdline on ${host.name}` : 'no running kube-apiserver',
        });
        plane.steps.push({
          step: "read the kubelet's client and serving certificates",
          ms: Math.round(performance.now() - t2),
          ok: true,
          output: plane.kubeletCerts.verdict,
        });
        if (!plane.node.components['kube-proxy'])
          plane.notes.push(
            `no running kube-proxy container on ${host.name}: the node rows have no kube-proxy for kubeadm`,
          );
        const pod = (plane.kubeadm.firstPod = await firstPod(plane, s, ctx.params.dnsDomain, bare));
        plane.notes.push(
          `kube-proxy and CoreDNS ready; busybox Pod Running on ${pod.node} ${(pod.runningMs / 1000).toFixed(1)} s after its creation, ${(pod.sinceLabMs / 1000).toFixed(1)} s after the bare lab; ${pod.dns.name} resolved to ${pod.dns.address} inside it`,
        );
        const joined = [
          cp,
          ...(wHost && wSession ? [{ s: wSession, name: wHost.name, address: wHost.address }] : []),
        ];
        const opened: Session[] = [];
        try {
          const m = opts.controlPlanes ? info.hosts[1 + (opts.workers ?? 0)] : undefined;
          if (m) {
            const ms = await lab.labConnect(m.name, labOpts);
            opened.push(ms);
            const member = { s: ms, name: m.name, address: m.address };
            const peers = [...joined];
            joined.push(member);
            plane.kubeadm.controlPlane = await joinControlPlane(
              plane,
              cp,
              member,
              peers,
              ctx.params.kubernetesVersion,
              ctx.log,
            );
          }
        } finally {
          for (const o of opened) await o.close();
        }
        // How the node reaches the API: read on the worker (its kubelet.conf is the join's endpoint).
        const t3 = performance.now();
        const member = opts.controlPlanes ? info.hosts[1 + (opts.workers ?? 0)] : undefined;
        plane.nodeEndpoint = await readNodeEndpoint(
          wSession ?? s,
          wHost?.name ?? host.name,
          [host, ...(member ? [member] : [])],
          opts.controlPlanes
            ? `ClusterConfiguration.controlPlaneEndpoint ${host.address}:${APISERVER_PORT} (set because kubeadm refuses a control-plane join without one)`
            : "no ClusterConfiguration.controlPlaneEndpoint: kubeadm names the init node's advertise address",
        );
        plane.steps.push({
          step: 'read the API server the kubelet and kube-proxy name on the worker',
          ms: Math.round(performance.now() - t3),
          ok: plane.nodeEndpoint.kind !== 'unknown',
          output: plane.nodeEndpoint.clients.map((c) => `${c.component}: ${c.server}`).join('\n'),
        });
        plane.ttfp = await watch.finish();
        if (opts.upgrade)
          plane.upgradePlan = await kubeadmUpgradePlan(plane, s, opts.upgrade, ctx.log);
        if (ctx.cis)
          plane.cis = await scanLabHost('kubeadm', s, ctx.params.kubernetesVersion, ctx.log);
        // PKI and kubeconfigs. Certificates only: private keys are never read.
        const files = (
          await run(
            plane,
            s,
            [
              'find',
              '/etc/kubernetes',
              '-type',
              'f',
              '(',
              '-name',
              '*.crt',
              '-o',
              '-name',
              '*.conf',
              ')',
            ],
            'list PKI and kubeconfigs',
          )
        )
          .trim()
          .split('\n')
          .filter(Boolean)
          .sort();
        for (const path of files) {
          const rel = path.slice('/etc/kubernetes/'.length);
          const text = (await s.readFile(path)).toString('utf8');
          if (path.endsWith('.crt'))
            plane.certs.push({ role: roleOf(rel), path, kind: 'cert', facts: certFacts(text) });
          else {
            // After kubelet-finalize, kubelet.conf names the kubelet's rotated pair (certificate and key in one
            // file) instead of embedding it: only the certificate blocks are read, on the host.
            const file = (parseYaml(text) as { users?: { user?: Record<string, string> }[] })
              .users?.[0]?.user?.['client-certificate'];
            const pem = file
              ? (
                  await s.exec(
                    [
                      'sed',
                      '-n',
                      '/-----BEGIN CERTIFICATE-----/,/-----END CERTIFICATE-----/p',
                      file,
                    ],
                    { allowFail: true },
                  )
                ).stdout
              : '';
            const c = kubeconfigCert(text, path, roleOf(rel), pem || undefined);
            if (c) plane.certs.push(c);
            else plane.notes.push(`${path} has no embedded client certificate`);
          }
        }
        await readKubeadmNodes(
          plane,
          s,
          info.hosts.slice(1).map((h) => h.name),
          labOpts,
          ctx,
        );
      } finally {
        await watch.finish(0);
        await workerPrepared?.catch(() => undefined);
        await wSession?.close();
        await ws.close();
        await s.close();
        if (!opts.keep) await lab.labDown(labOpts);
      }
      for (const c of COMPONENTS)
        plane.flagReasons[c] = kubeadmSourceReasons(ctx.params.kubernetesVersion, c);
      if (Object.values(plane.flagReasons).every((r) => Object.keys(r ?? {}).length === 0)) {
        plane.notes.push(
          `kubeadm source for ${ctx.params.kubernetesVersion} is not in the Go module cache (${goModCache()}), so kubeadm rows carry no source line`,
        );
      }
      plane.why = `real kubeadm ${plane.version} \`kubeadm init\` (every phase) on fresh lab host ${plane.host}, its static Pods run by the kubelet in containerd from images built here, read live`;
      return plane;
    },
  };
}
