// Why the k0s worker's kubelet and kube-proxy run with each flag and config field: the line of k0s's
// source at the tag that sets it (its kubelet component, its worker-profile defaults, its kube-proxy
// manifest), or the choice this lab makes (config.ts, worker.ts). Read from the source tree k0s was
// built from (~/.cache/hardwire/gosrc/k0s-<tag>); without it the reasons are left out.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { flagsOf } from '../normalize.ts';
import type { NodeComponent, NodeProcess } from '../node-types.ts';
import { configKeys, configValues } from '../config-values.ts';
import { WORKER_PROFILE } from './config.ts';

type Reason = { text: string; url?: string };

/** Where k0s sets each: the kubelet's flags, its config (profile defaults, then per-node overrides), kube-proxy's. */
const FILES = {
  kubeletFlags: ['pkg/component/worker/kubelet.go'],
  kubeletFields: [
    'pkg/component/controller/workerconfig/reconciler.go',
    'pkg/component/worker/kubelet.go',
  ],
  proxy: ['pkg/component/controller/kubeproxy.go'],
};

/** Choices of this lab, not k0s's. */
const OURS: Record<string, Reason> = {
  'kubelet --node-ip': {
    text: '--kubelet-extra-args on `k0s install worker`: a lab host has no default route, so the kubelet cannot pick its address itself (harness/planes/k0s/worker.ts)',
  },
  'kubelet --root-dir': {
    text: "--kubelet-root-dir on `k0s install worker`: the worker lab host's ext4 bind mount at /var/lib/kubelet (lab/worker.ts), as hardwire's own workers use it",
  },
  'kubelet --cert-dir': { text: 'k0s puts it under the kubelet root dir (--kubelet-root-dir)' },
  'kubelet failCgroupV1': {
    text: `worker profile ${WORKER_PROFILE} in k0s.yaml (spec.workerProfiles): kubelet v1.36 refuses cgroup v1 unless false, and this machine has only v1 (harness/planes/k0s/config.ts)`,
  },
  'kube-proxy mode': {
    text: 'network.kubeProxy.mode nftables in k0s.yaml, as on the other planes (harness/planes/k0s/config.ts)',
  },
};

function sourceLine(tree: string, tag: string, files: string[], re: RegExp): Reason | undefined {
  for (const file of files) {
    const path = join(tree, file);
    if (!existsSync(path)) continue;
    const lines = readFileSync(path, 'utf8').split('\n');
    const i = lines.findIndex((l) => re.test(l));
    if (i >= 0)
      return {
        text: `k0s ${file.split('/').pop()}:${i + 1}: ${lines[i]!.trim()}`,
        url: `https://github.com/k0sproject/k0s/blob/${encodeURIComponent(tag)}/${file}#L${i + 1}`,
      };
  }
  return undefined;
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A config field's Go name in k0s's source: its json path's last part, any case (clusterDNS -> ClusterDNS). */
const fieldRe = (key: string) => new RegExp(`\\b${esc(key.split('.').pop()!)}\\s*(:|=)`, 'i');

function reasonsFor(
  component: NodeComponent,
  p: NodeProcess,
  tree: string,
  tag: string,
  version: string,
): Record<string, Reason> {
  const out: Record<string, Reason> = {};
  const flagFiles = component === 'kubelet' ? FILES.kubeletFlags : FILES.proxy;
  const fieldFiles = component === 'kubelet' ? FILES.kubeletFields : FILES.proxy;
  for (const name of flagsOf(p.argv).keys()) {
    const r =
      OURS[`${component} --${name}`] ??
      sourceLine(tree, tag, flagFiles, new RegExp(`"(--)?${esc(name)}"`));
    if (r) out[`--${name}`] = r;
  }
  const fields = p.config
    ? configValues(p.config, configKeys(component, version))
    : new Map<string, string>();
  for (const key of fields.keys()) {
    const r = OURS[`${component} ${key}`] ?? sourceLine(tree, tag, fieldFiles, fieldRe(key));
    if (r) out[key] = r;
  }
  return out;
}

/** Reasons per node component, keyed as the node section keys them (`--flag`, or a config field's json path). */
export function workerReasons(
  procs: Partial<Record<NodeComponent, NodeProcess>>,
  tree: string,
  tag: string,
  version: string,
): Partial<Record<NodeComponent, Record<string, Reason>>> {
  const out: Partial<Record<NodeComponent, Record<string, Reason>>> = {};
  for (const [c, p] of Object.entries(procs) as [NodeComponent, NodeProcess][])
    out[c] = reasonsFor(c, p, tree, tag, version);
  return out;
}
