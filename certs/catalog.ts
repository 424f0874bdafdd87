// Which certificate lives in which file on which host, named as `kubeadm certs check-expiration`
// names them. Pure: inventory in, rows out. Mirrors render/host-tree.ts (the files wire installs).
import type { Host, Inventory } from '../inventory/load.ts';
import { CAS, KUBECONFIGS, kubeconfigLeaf, leafTable, type CaId } from '../pki/table.ts';
import { K, PKI } from '../components/models/types.ts';

export interface RemoteCert {
  /** kubeadm's name: apiserver, etcd-peer, scheduler.conf... */
  name: string;
  /** Operator-side leaf id in pki/table.ts (kubeconfig-scheduler, etcd-peer...). */
  leafId: string;
  ca: CaId;
  host: string;
  /** Absolute path on the host. */
  path: string;
  /** The cert is client-certificate-data inside a kubeconfig, not a PEM file. */
  embedded: boolean;
}

export interface RemoteCa { name: CaId; host: string; path: string }

/** Leaf pairs installed on a host: kubeadm name, operator leaf id, host path (no extension). */
function pairsOn(inv: Inventory, host: Host): { name: string; leafId: string; path: string }[] {
  const out: { name: string; leafId: string; path: string }[] = [];
  if (host.isControlPlane) {
    for (const id of ['apiserver', 'apiserver-etcd-client', 'apiserver-kubelet-client', 'front-proxy-client']) out.push({ name: id, leafId: id, path: `${PKI}/${id}` });
  }
  if (host.isEtcd) {
    out.push(
      { name: 'etcd-healthcheck-client', leafId: 'etcd-healthcheck-client', path: `${PKI}/etcd/healthcheck-client` },
      { name: 'etcd-peer', leafId: 'etcd-peer', path: `${PKI}/etcd/peer` },
      { name: 'etcd-server', leafId: 'etcd-server', path: `${PKI}/etcd/server` },
    );
  }
  return out;
}

export function remoteCerts(inv: Inventory, host: Host): RemoteCert[] {
  const caOf = new Map(leafTable(inv).map((l) => [l.id, l.ca]));
  const out: RemoteCert[] = pairsOn(inv, host).map((p) => ({ name: p.name, leafId: p.leafId, ca: caOf.get(p.leafId)!, host: host.name, path: `${p.path}.crt`, embedded: false }));
  if (host.isControlPlane) {
    const first = inv.controlPlaneHosts[0]?.name === host.name;
    for (const k of KUBECONFIGS) {
      if (k.id === 'super-admin' && !first) continue; // as render/host-tree.ts: one host only
      out.push({ name: k.file, leafId: kubeconfigLeaf(k).id, ca: 'ca', host: host.name, path: `${K}/${k.file}`, embedded: true });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

export function remoteCas(host: Host): RemoteCa[] {
  const out: RemoteCa[] = [];
  if (host.isControlPlane) out.push({ name: 'ca', host: host.name, path: `${PKI}/ca.crt` }, { name: 'front-proxy-ca', host: host.name, path: `${PKI}/front-proxy-ca.crt` });
  if (host.isEtcd || host.isControlPlane) out.push({ name: 'etcd-ca', host: host.name, path: `${PKI}/etcd/ca.crt` });
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** Every name `certs renew` accepts, in kubeadm's spelling, with the operator leaf it maps to. */
export function renewableNames(inv: Inventory): Map<string, string> {
  const m = new Map<string, string>();
  for (const h of inv.hosts) for (const c of remoteCerts(inv, h)) m.set(c.name, c.leafId);
  return new Map([...m].sort(([a], [b]) => a.localeCompare(b)));
}

export const CA_FILES: Record<CaId, string> = Object.fromEntries(CAS.map((c) => [c.id, c.file])) as Record<CaId, string>;
