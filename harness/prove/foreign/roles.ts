// hardwire's file for each role on one host, from the one certificate table (core/pki/table.ts):
// the file a foreign tool's flag names is run as the file hardwire placed for the same certificate,
// key, kubeconfig identity or data dir. Pure: inventory, host and the unit's text in, paths out.
import type { Host, Inventory } from '../../../core/inventory/load.ts';
import {
  CAS,
  SECRET_FILES,
  kubeconfigFiles,
  leafTable,
  placedOn,
  type Placement,
} from '../../../core/pki/table.ts';
import { ETCD_DATA_DIR } from '../../../core/components/models/etcd.ts';

/**
 * A role: `cert:<id>` / `key:<id>` (a table id: ca, apiserver, etcd-server, …), `kubeconfig:<id>`
 * (controller-manager, scheduler, admin, …), `file:<name>` (sa.key, sa.pub) or `dir:etcd-data`.
 */
export type Role = string;

/** Where hardwire put a role's file on the host (`path`); `run`: the path the component reads it at, when that differs (a systemd credential). */
export interface RoleFile {
  path: string;
  run?: string;
  how: string;
}

/** `LoadCredential=name:path` lines of a unit: hardwire's file at `path` is read at /run/credentials/<unit>/<name>. */
export function credentials(unitText: string, unit: string): Map<string, string> {
  return new Map(
    [...unitText.matchAll(/^LoadCredential=([^:\n]+):(.+)$/gm)].map((m) => [
      m[2]!.trim(),
      `/run/credentials/${unit}/${m[1]!.trim()}`,
    ]),
  );
}

/** Every role hardwire placed on `host`, with its file there; read through the unit's credentials where it loads them. */
export function hardwireFiles(
  inv: Inventory,
  host: Host,
  unitText = '',
  unit = '',
): Map<Role, RoleFile> {
  const out = new Map<Role, RoleFile>();
  const creds = credentials(unitText, unit);
  const put = (role: Role, path: string, what: string) => {
    const run = creds.get(path);
    out.set(role, {
      path,
      ...(run ? { run } : {}),
      how: `${what}${run ? `, which ${unit} loads as a credential` : ''}`,
    });
  };
  const pairs = [...CAS, ...leafTable(inv)] as {
    id: string;
    host?: string;
    placements: Placement[];
  }[];
  for (const e of pairs) {
    for (const p of e.placements.filter((x) => placedOn(x, inv, host, e.host))) {
      put(`cert:${e.id}`, `${p.path}.crt`, `hardwire's ${e.id} certificate`);
      if (p.key) put(`key:${e.id}`, `${p.path}.key`, `hardwire's ${e.id} key`);
    }
  }
  for (const f of kubeconfigFiles(inv).filter((k) => placedOn(k.placement, inv, host, k.host)))
    put(`kubeconfig:${f.spec.id}`, f.placement.path, `hardwire's ${f.spec.id} kubeconfig`);
  for (const s of SECRET_FILES.filter((x) => placedOn(x.placement, inv, host)))
    put(`file:${s.file}`, s.placement.path, `hardwire's ${s.file}`);
  if (host.isEtcd) put('dir:etcd-data', ETCD_DATA_DIR, "hardwire's etcd data dir");
  return out;
}
