// Builds, for one host, every file hardwire will put there, at kubeadm's paths. Pure: reads the
// operator PKI, returns data. Writing it locally (render) or remotely (wire) happens elsewhere.
import type { NodeProfile } from '../preflight/profile.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { Inventory, Host } from '../inventory/load.ts';
import {
  CAS,
  SECRET_FILES,
  kubeconfigFiles,
  leafTable,
  placedOn,
  type Placement,
} from '../pki/table.ts';
import { kubeconfigServer, kubeconfigYaml } from '../pki/kubeconfig.ts';
import { modelsFor, type UnitModel } from '../components/models/index.ts';
import { componentsOn, specOf, type ComponentName } from '../components/registry/index.ts';
import { UNIT_DIR } from '../../lib/constants.ts';
import { renderUnit, type Citer } from './systemd.ts';
import { checkFlagsKnown } from './citations.ts';
import { unitOf } from '../../lib/unit.ts';

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
  return `${UNIT_DIR}/${unitOf(c)}`;
}

function file(
  path: string,
  content: string | Buffer,
  mode: number,
  readBy: ComponentName[],
): HostFile {
  const buf = typeof content === 'string' ? Buffer.from(content) : content;
  return {
    path,
    content: buf,
    mode,
    sha256: createHash('sha256').update(buf).digest('hex'),
    readBy,
  };
}

const PRIVATE = 0o600;
const PUBLIC = 0o644;

/** Adds a file, or merges the readers of one already placed at that path (a host with both roles). */
function place(files: Map<string, HostFile>, f: HostFile): void {
  const had = files.get(f.path);
  files.set(f.path, had ? { ...had, readBy: [...new Set([...had.readBy, ...f.readBy])] } : f);
}

/** Every certificate, key, kubeconfig and secret the table places on this host. */
function pkiFiles(inv: Inventory, host: Host, pkiDir: string): HostFile[] {
  const read = (rel: string) => readFileSync(join(pkiDir, rel));
  const files = new Map<string, HostFile>();
  const pairs = [...CAS, ...leafTable(inv)] as {
    file: string;
    host?: string;
    placements: Placement[];
  }[];
  for (const e of pairs) {
    for (const p of e.placements.filter((x) => placedOn(x, inv, host, e.host))) {
      place(files, file(`${p.path}.crt`, read(`${e.file}.crt`), PUBLIC, p.readBy));
      if (p.key) place(files, file(`${p.path}.key`, read(`${e.file}.key`), PRIVATE, p.readBy));
    }
  }
  for (const sf of SECRET_FILES.filter((x) => placedOn(x.placement, inv, host))) {
    place(
      files,
      file(sf.placement.path, read(sf.file), sf.private ? PRIVATE : PUBLIC, sf.placement.readBy),
    );
  }
  const caPem = () => read('ca.crt').toString();
  for (const { spec, leaf, placement: p } of kubeconfigFiles(inv)) {
    if (!placedOn(p, inv, host, leaf.host)) continue;
    place(
      files,
      file(
        p.path,
        kubeconfigYaml({
          cluster: inv.cluster.name,
          server: kubeconfigServer(spec, inv.endpoint),
          caPem: caPem(),
          certPem: read(`${leaf.file}.crt`).toString(),
          keyPem: read(`${leaf.file}.key`).toString(),
          user: leaf.cn,
        }),
        PRIVATE,
        p.readBy,
      ),
    );
  }
  return [...files.values()];
}

export function renderHostTree(
  inv: Inventory,
  host: Host,
  pkiDir: string,
  cite?: Citer,
  node?: NodeProfile,
): HostTree {
  const files = pkiFiles(inv, host, pkiDir);
  const models = modelsFor({ inv, host, citeConfig: cite?.config, node });
  if (cite) checkFlagsKnown(models, inv.cluster.kubernetesVersion);
  for (const m of models) {
    const spec = specOf(m.component);
    const after = componentsOn(host)
      .filter((c) => spec.after?.includes(c))
      .map((c) => unitOf(c));
    // 0600: the unit holds the component's whole command line, which CIS (1.1.1-1.1.8) protects
    // like a kubeadm static Pod manifest; only systemd (root) reads it.
    files.push(
      file(
        unitPath(m.component),
        renderUnit(m, { cluster: inv.cluster.name, host: host.name, after, cite }),
        PRIVATE,
        [m.component],
      ),
    );
    for (const f of m.files ?? []) files.push(file(f.path, f.content, f.mode, [m.component]));
  }
  files.sort((a, b) => a.path.localeCompare(b.path));
  return { host, components: componentsOn(host), models, files };
}
