// The kubeadm plane's node, for compare's node rows: the kubelet (systemd, kubeadm's drop-in) and
// kube-proxy (kubeadm's DaemonSet, in a container) on the host `kubeadm init` ran on, each flag and
// field with why kubeadm passes it: its drop-in, its kubeadm-flags.env, its DaemonSet (cited to
// kubeadm's source at the tag), or kubeadm.yaml's documents (kubeadm-init.ts).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { goModCache } from '../../core/components/binaries/go-env.ts';
import { leafKeys } from '../../core/components/models/config-file.ts';
import { KUBE_PROXY_IN_A_LAB_HOST } from '../../core/components/models/kube-proxy.ts';
import type { Session } from '../../core/transport/index.ts';
import { flagsOf } from './normalize.ts';
import type { PlaneNode } from './node-types.ts';
import { KUBELET_NEEDS } from './kubeadm-init.ts';
import { KUBEADM_DROPIN } from './kubeadm-node.ts';
import { readNodeProcess } from './node-read.ts';
import { criContainers } from './crictl.ts';

type Reason = { text: string; url?: string };

/** `file:line` of the first line of a kubeadm source file (at the tag, in the module cache) containing `needle`, and its link. */
function kubeadmLine(
  version: string,
  file: string,
  needle: string,
): { at: string; url: string } | undefined {
  const path = join(goModCache(), 'k8s.io', `kubernetes@${version}`, file);
  if (!existsSync(path)) return undefined;
  const i = readFileSync(path, 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(needle));
  return i < 0
    ? undefined
    : {
        at: `${file.split('/').pop()}:${i + 1}`,
        url: `https://github.com/kubernetes/kubernetes/blob/${version}/${file}#L${i + 1}`,
      };
}

const cited = (text: string, site: { at: string; url: string } | undefined): Reason =>
  site ? { text: `${text} (${site.at})`, url: site.url } : { text };

/** Why each kubelet flag is on kubeadm's command line: the drop-in's variables, then kubeadm-flags.env. */
export function kubeletFlagReasons(flagsEnv: string, version: string): Record<string, Reason> {
  const out: Record<string, Reason> = {};
  for (const m of KUBEADM_DROPIN.matchAll(/Environment="(KUBELET_\w+_ARGS)=([^"]*)"/g)) {
    for (const name of flagsOf(['kubelet', ...m[2]!.split(' ')]).keys())
      out[`--${name}`] = {
        text: `${m[1]} in the 10-kubeadm.conf drop-in the kubeadm package installs`,
      };
  }
  const env = /KUBELET_KUBEADM_ARGS="([^"]*)"/.exec(flagsEnv)?.[1] ?? '';
  const write = kubeadmLine(
    version,
    'cmd/kubeadm/app/phases/kubelet/flags.go',
    'func WriteKubeletArgsToFile(',
  );
  for (const name of flagsOf(['kubelet', ...env.split(' ').filter(Boolean)]).keys()) {
    out[`--${name}`] = cited(
      name === 'node-ip'
        ? "nodeRegistration.kubeletExtraArgs in kubeadm.yaml (lab hosts have no default route), which kubeadm's kubelet-start phase writes to /var/lib/kubelet/kubeadm-flags.env"
        : "KUBELET_KUBEADM_ARGS in /var/lib/kubelet/kubeadm-flags.env, written by kubeadm's kubelet-start phase",
      write,
    );
  }
  return out;
}

/** Fields kubeadm.yaml sets, by json path, with its reason; kubeadm's own defaults fill in the rest. */
function fieldReasons(
  fields: { key: string; value: unknown; why: string }[],
  doc: string,
): Record<string, Reason> {
  return Object.fromEntries(
    fields.flatMap((f) =>
      leafKeys(f.key, f.value).map((k) => [k, { text: `${doc} in kubeadm.yaml: ${f.why}` }]),
    ),
  );
}

/** The kubelet (`kubeletPid`, from systemd) and the kube-proxy container on `host`, with their config files and reasons. */
export async function readKubeadmNode(
  s: Session,
  host: string,
  kubeletPid: number,
  flagsEnv: string,
  version: string,
): Promise<PlaneNode> {
  const kubelet = await readNodeProcess(s, kubeletPid, host);
  const proxy = (await criContainers(s)).find(
    (c) =>
      c.labels['io.kubernetes.container.name'] === 'kube-proxy' &&
      c.labels['io.kubernetes.pod.namespace'] === 'kube-system',
  );
  const node: PlaneNode = {
    host,
    components: { kubelet },
    reasons: {
      kubelet: {
        ...kubeletFlagReasons(flagsEnv, version),
        ...fieldReasons(KUBELET_NEEDS, 'KubeletConfiguration'),
      },
      'kube-proxy': {
        '--config': cited(
          "kubeadm's kube-proxy DaemonSet command: the kube-proxy ConfigMap's config.conf, mounted",
          kubeadmLine(version, 'cmd/kubeadm/app/phases/addons/proxy/manifests.go', '- --config='),
        ),
        '--hostname-override': cited(
          "kubeadm's kube-proxy DaemonSet command: $(NODE_NAME), the Pod's spec.nodeName",
          kubeadmLine(
            version,
            'cmd/kubeadm/app/phases/addons/proxy/manifests.go',
            '- --hostname-override=',
          ),
        ),
        ...fieldReasons(KUBE_PROXY_IN_A_LAB_HOST, 'KubeProxyConfiguration'),
      },
    },
  };
  if (proxy) {
    const p = await readNodeProcess(
      s,
      proxy.pid,
      `${host}, container ${proxy.id.slice(0, 12)} of Pod ${proxy.labels['io.kubernetes.pod.name'] ?? '?'}`,
    );
    if (p.configSource) p.configSource += ' (the kube-proxy ConfigMap, mounted)';
    node.components['kube-proxy'] = p;
  }
  return node;
}
