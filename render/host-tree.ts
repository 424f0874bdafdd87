// Builds, for one host, every file hardwire will put there, at kubeadm's paths. Pure: reads the
// operator PKI, returns data. Writing it locally (render) or remotely (wire) happens elsewhere.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { Inventory, Host } from '../inventory/load.ts';
import { KUBECONFIGS, kubeconfigLeaf } from '../pki/table.ts';
import { kubeconfigServer, kubeconfigYaml } from '../pki/kubeconfig.ts';
import { componentsOn, modelsFor, type ComponentName, type UnitModel } from '../components/models/index.ts';
import { K, PKI } from '../components/models/types.ts';
import { renderUnit, type Citer } from './systemd.ts';
import { checkFlagsKnown } from './citations.ts';

export interface HostFile {
  /** Absolute path on the host. */
  path: string;
  content: Buffer;
  mode: number;
  sha256: string;
  /** Components that read this file at start, so a change restarts them. */
  readBy: ComponentName[];
}

export interface HostTree {
  host: Host;
  components: ComponentName[];
  models: UnitModel[];
  files: HostFile[];
}

export function unitPath(c: ComponentName): string {
  return `/etc/systemd/system/${c}.service`;
}

function file(path: string, content: string | Buffer, mode: number, readBy: ComponentName[]): HostFile {
  const buf = typeof content === 'string' ? Buffer.from(content) : content;
  return { path, content: buf, mode, sha256: createHash('sha256').update(buf).digest('hex'), readBy };
}

const PRIVATE = 0o600;
const PUBLIC = 0o644;

export function renderHostTree(inv: Inventory, host: Host, pkiDir: string, cite?: Citer): HostTree {
  const read = (rel: string) => readFileSync(join(pkiDir, rel));
  const files: HostFile[] = [];
  const pair = (src: string, dst: string, readBy: ComponentName[]) => {
    files.push(file(`${PKI}/${dst}.crt`, read(`${src}.crt`), PUBLIC, readBy));
    files.push(file(`${PKI}/${dst}.key`, read(`${src}.key`), PRIVATE, readBy));
  };

  if (host.isEtcd) {
    files.push(file(`${PKI}/etcd/ca.crt`, read('etcd/ca.crt'), PUBLIC, host.isControlPlane ? ['etcd', 'kube-apiserver'] : ['etcd']));
    pair(`etcd/${host.name}/server`, 'etcd/server', ['etcd']);
    pair(`etcd/${host.name}/peer`, 'etcd/peer', ['etcd']);
    pair('etcd/healthcheck-client', 'etcd/healthcheck-client', []);
  }
  if (host.isControlPlane) {
    if (!host.isEtcd) files.push(file(`${PKI}/etcd/ca.crt`, read('etcd/ca.crt'), PUBLIC, ['kube-apiserver']));
    pair('ca', 'ca', ['kube-apiserver', 'kube-controller-manager']);
    files.push(file(`${PKI}/front-proxy-ca.crt`, read('front-proxy-ca.crt'), PUBLIC, ['kube-apiserver', 'kube-controller-manager']));
    pair('apiserver', 'apiserver', ['kube-apiserver']);
    pair('apiserver-kubelet-client', 'apiserver-kubelet-client', ['kube-apiserver']);
    pair('apiserver-etcd-client', 'apiserver-etcd-client', ['kube-apiserver']);
    pair('front-proxy-client', 'front-proxy-client', ['kube-apiserver']);
    files.push(file(`${PKI}/sa.key`, read('sa.key'), PRIVATE, ['kube-apiserver', 'kube-controller-manager']));
    files.push(file(`${PKI}/sa.pub`, read('sa.pub'), PUBLIC, ['kube-apiserver']));
    files.push(file(`${K}/encryption-config.yaml`, read('encryption-config.yaml'), PRIVATE, ['kube-apiserver']));
    const caPem = read('ca.crt').toString();
    const first = inv.controlPlaneHosts[0]?.name === host.name;
    for (const k of KUBECONFIGS) {
      if (k.id === 'super-admin' && !first) continue; // break-glass credential: one host only, as kubeadm does
      const leaf = kubeconfigLeaf(k);
      const readBy: ComponentName[] = k.id === 'controller-manager' ? ['kube-controller-manager'] : k.id === 'scheduler' ? ['kube-scheduler'] : [];
      files.push(file(`${K}/${k.file}`, kubeconfigYaml({
        cluster: inv.cluster.name, server: kubeconfigServer(k, inv.endpoint), caPem,
        certPem: read(`${leaf.file}.crt`).toString(), keyPem: read(`${leaf.file}.key`).toString(), user: k.cn,
      }), PRIVATE, readBy));
    }
  }

  const models = modelsFor({ inv, host });
  if (cite) checkFlagsKnown(models, inv.cluster.kubernetesVersion);
  for (const m of models) {
    const after = m.component === 'kube-apiserver' && host.isEtcd ? ['etcd.service'] : [];
    files.push(file(unitPath(m.component), renderUnit(m, { cluster: inv.cluster.name, host: host.name, after, cite }), PUBLIC, [m.component]));
  }
  files.sort((a, b) => a.path.localeCompare(b.path));
  return { host, components: componentsOn(host), models, files };
}
