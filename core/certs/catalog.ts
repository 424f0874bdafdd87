// Which certificate lives in which file on which host, named as `kubeadm certs check-expiration`
// names them. Pure: derived from the placements in pki/table.ts, as render/host-tree.ts is.
import type { Host, Inventory } from '../inventory/load.ts';
import { CAS, kubeconfigFiles, leafTable, placedOn, type CaId } from '../pki/table.ts';

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

export interface RemoteCa {
  name: CaId;
  host: string;
  path: string;
}

export function remoteCerts(inv: Inventory, host: Host): RemoteCert[] {
  const out: RemoteCert[] = [];
  for (const l of leafTable(inv)) {
    for (const p of l.placements.filter((x) => placedOn(x, inv, host, l.host))) {
      out.push({
        name: l.id,
        leafId: l.id,
        ca: l.ca,
        host: host.name,
        path: `${p.path}.crt`,
        embedded: false,
      });
    }
  }
  for (const { spec, leaf, placement: p } of kubeconfigFiles(inv)) {
    if (placedOn(p, inv, host, leaf.host))
      out.push({
        name: spec.file,
        leafId: leaf.id,
        ca: 'ca',
        host: host.name,
        path: p.path,
        embedded: true,
      });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

export function remoteCas(inv: Inventory, host: Host): RemoteCa[] {
  const out = new Map<string, RemoteCa>();
  for (const ca of CAS) {
    for (const p of ca.placements.filter((x) => placedOn(x, inv, host)))
      out.set(`${ca.id} ${p.path}`, { name: ca.id, host: host.name, path: `${p.path}.crt` });
  }
  return [...out.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** Every name `certs renew` accepts, in kubeadm's spelling, with the operator leaf it maps to. */
export function renewableNames(inv: Inventory): Map<string, string> {
  const m = new Map<string, string>();
  for (const h of inv.hosts) for (const c of remoteCerts(inv, h)) m.set(c.name, c.leafId);
  return new Map([...m].sort(([a], [b]) => a.localeCompare(b)));
}
