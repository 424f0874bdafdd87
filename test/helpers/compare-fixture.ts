// compare's report from a fixture, with no lab: three planes whose command lines pass every flag the
// flag map has for each component, whose two workers' config files set every config field the map
// has, and whose node process trees hold a process with every kube-apiserver flag on its argv. Built
// by the real buildReport; test/compare-html.test.ts and test/html-reports.test.ts read it.
import { stringify } from 'yaml';
import { loadFlagMap } from '../../core/flags/map.ts';
import { buildReport } from '../../harness/compare/build.ts';
import type { CompareReport } from '../../harness/compare/types.ts';
import { KUBEADM_TOKENS } from '../../harness/planes/normalize.ts';
import {
  COMPONENTS,
  emptyPlane,
  type ClusterParams,
  type PlaneData,
  type PlaneName,
} from '../../harness/planes/types.ts';
import type { NodeComponent, PlaneNode } from '../../harness/planes/node-types.ts';
import { buildTree, countsOf, parseProcDump } from '../../harness/planes/proc-tree.ts';
import { NOT_ASKED } from '../../harness/planes/plane-names.ts';

export const VERSION = 'v1.36.3';

const params: ClusterParams = {
  kubernetesVersion: VERSION,
  clusterName: 'fixture',
  nodeName: 'node1',
  advertiseAddress: '10.0.0.2',
  serviceCIDR: '10.96.0.0/12',
  podCIDR: '10.244.0.0/16',
  dnsDomain: 'cluster.local',
  extraSANs: [],
  firstServiceIp: '10.96.0.1',
};

/** Every flag of the component's map, with its default (or a stand-in) as the value. */
function everyFlag(component: string, binary: string): string[] {
  return [
    binary,
    ...loadFlagMap(component, VERSION).flags.map(
      (f) => `--${f.name}=${f.type === 'bool' ? 'true' : f.default || '/etc/kubernetes/pki/x.crt'}`,
    ),
  ];
}

/** A config file setting every leaf field of the map's config section. */
function everyField(component: NodeComponent): string {
  const keys = loadFlagMap(component, VERSION).config!.fields.map((f) => f.key);
  const doc: Record<string, unknown> = {};
  for (const k of keys.filter((k) => !keys.some((x) => x.startsWith(`${k}.`)))) {
    const parts = k.split('.');
    let o = doc;
    for (const p of parts.slice(0, -1)) o = (o[p] ??= {}) as Record<string, unknown>;
    o[parts[parts.length - 1]!] = 'x';
  }
  return stringify(doc);
}

function node(host: string, reason: string): PlaneNode {
  const proc = (c: NodeComponent) => ({
    argv: everyFlag(c, `/usr/bin/${c}`),
    argvSource: `/proc/1/cmdline on ${host}`,
    config: everyField(c),
    configSource: `/proc/1/root/${c}.yaml on ${host}`,
  });
  return {
    host,
    components: { kubelet: proc('kubelet'), 'kube-proxy': proc('kube-proxy') },
    reasons: { kubelet: { '--config': { text: reason } } },
  };
}

function plane(p: PlaneName, withNode: boolean): PlaneData {
  const d = emptyPlane(p, 'fixture', true);
  d.pathTokens = KUBEADM_TOKENS;
  for (const c of COMPONENTS) d.commands[c] = { argv: everyFlag(c, c), source: 'fixture' };
  // A long list value, as k0s's cipher suites are.
  d.commands['kube-apiserver']!.argv.push(
    `--tls-cipher-suites=${Array(12).fill('TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256').join(',')}`,
  );
  if (withNode)
    d.node = node(
      `${p}-node1`,
      "everything that has a config field is set there, with its reason, as hardwire's model says for this flag of the kubelet",
    );
  // A node's process tree whose deepest process passes every kube-apiserver flag on one argv.
  const line = (pid: number, comm: string, ppid: number, cgroup: string, argv: string[]) =>
    `${pid} (${comm}) S ${ppid} ${pid} 0\t${cgroup}\t${argv.join('\u0001')}\u0001`;
  const procs = buildTree(
    parseProcDump(
      [
        line(1, 'systemd', 0, '/init.scope', ['/sbin/init']),
        line(200, 'containerd-shim', 1, '/system.slice/containerd.service', [
          '/usr/local/bin/containerd-shim-runc-v2',
          '-id',
          'ab'.repeat(32),
        ]),
        line(
          220,
          'kube-apiserver',
          200,
          '/kubepods/burstable/pod3f2a9c1e-0b7d-4e55-9a1c-77d0e2b4c6f1/cd',
          everyFlag('kube-apiserver', 'kube-apiserver'),
        ),
      ].join('\n'),
    ),
  );
  d.nodeProcs = [
    { host: `${p}-node1`, role: 'fixture', source: 'fixture', procs, counts: countsOf(procs) },
  ];
  return d;
}

/** The report of the three fixture planes (k0s without a worker). */
export function fixtureReport(): CompareReport {
  return buildReport(params, {
    hardwire: plane('hardwire', true),
    kubeadm: plane('kubeadm', true),
    k0s: plane('k0s', false),
    yours: emptyPlane('yours', NOT_ASKED),
  });
}
