// Objects this cluster stores that clients reach through an API version the target stops serving
// (issue 24). Which kinds: the target's APILifecycleRemoved() (flags/data/<v>/api-lifecycle.json),
// removed after the source's minor and by the target's. Read live by listing each kind at that
// version, not from apiserver_storage_objects: the metric counts a resource over all its versions,
// so it cannot tell objects in networking.k8s.io/v1beta1 from the same objects in v1.
import { kubeJson, type KubeCreds } from '../transport/kube-api.ts';
import { StepError } from '../../lib/errors.ts';

/** One GET against the apiserver: its status and parsed body (404 allowed, anything else not 2xx throws). */
export type ApiGet = (path: string) => Promise<{ status: number; json: unknown }>;

/** The getter over hardwire's own mTLS client (core/transport/kube-api.ts). */
export const credsGet =
  (creds: KubeCreds): ApiGet =>
  (path) =>
    kubeJson(creds, 'GET', path, { allow: [404] });

/** A kind k8s.io/api marks removed (core/flags/api-lifecycle.ts reads them from the module cache). */
export interface RemovedKind {
  group: string;
  version: string;
  kind: string;
  /** "1.37": the minor at which the apiserver stops serving it. */
  removed: string;
  /** module@version/file:line of the APILifecycleRemoved() that says so (for a `gone` kind: its registration in the previous tree). */
  removedAt: string;
  /** Set when no APILifecycleRemoved() says so: the package is in the previous minor's k8s.io/api and not in this one's. */
  gone?: string;
}

export interface ApiLifecycle {
  module: string;
  version: string;
  /** The previous minor's k8s.io/api whose package directories were compared for `gone` kinds. */
  comparedWith?: string;
  kinds: RemovedKind[];
}

export interface StoredApiRow extends RemovedKind {
  /** The plural the cluster serves the kind under, or null when the group/version is not served. */
  resource: string | null;
  served: boolean;
  /** namespace/name (or name) of each object listed at that version. */
  objects: string[];
  note: string;
}

const minor = (v: string) => Number(/^v?1\.(\d+)/.exec(v)?.[1] ?? NaN);

/** The kinds the apiserver serves at `from` and stops serving at `to` (k8s.io/apiserver@v0.37.2/pkg/server/deleted_kinds.go:150, ShouldServeForVersion: removed after the current minor is served, at or before it is not). */
export function removedBetween(
  kinds: readonly RemovedKind[],
  from: string,
  to: string,
): RemovedKind[] {
  return kinds.filter((k) => {
    const m = minor(k.removed);
    return m > minor(from) && m <= minor(to);
  });
}

/**
 * Where the source's apiserver turns each group/version off unless --runtime-config enables it:
 * a reader's reason why a cluster at defaults serves none of them. Checked line by line in
 * test/upgrade-stored-apis.test.ts.
 */
export const DISABLED_AT_SOURCE: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'v1.36.3': {
    'storage.k8s.io/v1beta1': 'k8s.io/kubernetes@v1.36.3/pkg/controlplane/instance.go:489',
    'networking.k8s.io/v1beta1': 'k8s.io/kubernetes@v1.36.3/pkg/controlplane/instance.go:490',
    'certificates.k8s.io/v1alpha1': 'k8s.io/kubernetes@v1.36.3/pkg/controlplane/instance.go:502',
    'scheduling.k8s.io/v1alpha2': 'k8s.io/kubernetes@v1.36.3/pkg/controlplane/instance.go:507',
  },
};

interface Discovery {
  resources: { name: string; kind: string }[];
}
interface List {
  items: { metadata: { name: string; namespace?: string } }[];
}

/** One row per removed kind: its group/version's discovery, then every object listed at it. */
export async function storedInRemoved(
  get: ApiGet,
  kinds: readonly RemovedKind[],
  from: string,
): Promise<StoredApiRow[]> {
  const rows: StoredApiRow[] = [];
  for (const k of kinds) {
    const gv = `${k.group}/${k.version}`;
    const base = k.group === '' ? `/api/${k.version}` : `/apis/${gv}`;
    const d = await get(base);
    const res =
      d.status === 404
        ? undefined
        : (d.json as Discovery).resources.find((r) => r.kind === k.kind && !r.name.includes('/'));
    if (!res) {
      const off = DISABLED_AT_SOURCE[from]?.[gv];
      const gone = k.gone ? ` (${k.gone}: no APILifecycleRemoved() marks it)` : '';
      rows.push({
        ...k,
        resource: null,
        served: false,
        objects: [],
        note: `${gv} ${k.kind} is not served by this cluster${off ? ` (off by default at ${from}, ${off}; only --runtime-config turns it on)` : ''}: no object is reached through it${gone}`,
      });
      continue;
    }
    const list = await get(`${base}/${res.name}`);
    if (list.status === 404)
      throw new StepError(
        'kube-api',
        `GET ${base}/${res.name} returned 404 after discovery listed it`,
      );
    const items = (list.json as List).items;
    const objects = items.map((i) =>
      i.metadata.namespace ? `${i.metadata.namespace}/${i.metadata.name}` : i.metadata.name,
    );
    rows.push({
      ...k,
      resource: res.name,
      served: true,
      objects,
      note: `${objects.length ? `${objects.length} object(s) reached through ${gv}: clients and manifests using it get 404 once the apiserver is ${k.removed}; move them to a served version first` : 'served, no objects'}${k.gone ? ` (${k.gone}: no APILifecycleRemoved() marks it)` : ''}`,
    });
  }
  return rows;
}
