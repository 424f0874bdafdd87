// audit --upgrade-to: the objects this cluster keeps in APIs the target stops serving (the same
// listing as upgrade plan's, core/upgrade/stored-apis.ts). The audit holds no credentials of its
// own, so it lists through a running kube-controller-manager's --kubeconfig, by curl on that host
// (read-scripts.ts KUBE_GET): that identity may list every resource (k8s.io/kubernetes@v1.36.3/
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go:488) and its key never leaves the host.
import type { ReadSession } from '../../core/transport/index.ts';
import { KUBE_GET } from '../../core/transport/read-scripts.ts';
import {
  removedBetween,
  storedInRemoved,
  type ApiGet,
  type ApiLifecycle,
} from '../../core/upgrade/stored-apis.ts';
import type { AuditApis, AuditProcess } from './types.ts';

/** Why the kube-controller-manager's identity can list them: its bootstrap ClusterRole's list/watch on every resource. */
export const KCM_LISTS_ALL =
  'k8s.io/kubernetes@v1.36.3/plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go:488';

/** GETs through the kubeconfig `path` as process `pid` sees it; 404 is an answer, any other non-2xx throws. */
export function kubeconfigGet(
  s: ReadSession,
  pid: number,
  path: string,
  seen: { server?: string } = {},
): ApiGet {
  return async (api) => {
    const r = await s.exec(['bash', '-c', KUBE_GET, 'kube-get', `/proc/${pid}/root`, path, api], {
      allowFail: true,
      timeoutMs: 60_000,
    });
    const lines = r.stdout.replace(/\n$/, '').split('\n');
    seen.server = lines.shift();
    const status = Number(lines.pop());
    if (r.code !== 0 || !Number.isInteger(status) || status === 0)
      throw new Error(
        `GET ${api} through ${path} failed: ${(r.stderr.trim().split('\n')[0] ?? '') || `exit ${r.code}`}`,
      );
    const body = lines.join('\n');
    if (status === 404) return { status, json: {} };
    if (status < 200 || status > 299)
      throw new Error(`GET ${api} through ${path} returned ${status}: ${body.slice(0, 200)}`);
    return { status, json: JSON.parse(body) as unknown };
  };
}

/** The kube-controller-manager on this host whose --kubeconfig the listing goes through, if any. */
export function listerOn(procs: AuditProcess[]): { p: AuditProcess; path: string } | undefined {
  for (const p of procs) {
    if (p.component !== 'kube-controller-manager') continue;
    const path = p.flags.find((f) => f.name === 'kubeconfig')?.value;
    if (path) return { p, path };
  }
  return undefined;
}

/** The kinds `to` stops serving, from the version the apiserver behind the kubeconfig reports, each listed at its version. */
export async function storedApis(
  s: ReadSession,
  host: string,
  lister: { p: AuditProcess; path: string },
  lifecycle: ApiLifecycle,
  to: string,
): Promise<AuditApis> {
  const seen: { server?: string } = {};
  const get = kubeconfigGet(s, lister.p.pid, lister.path, seen);
  const from = ((await get('/version')).json as { gitVersion?: string }).gitVersion;
  if (!from) throw new Error(`GET /version through ${lister.path} named no gitVersion`);
  const release = from.replace(/\+.*$/, '');
  return {
    to,
    from,
    server: seen.server ?? '?',
    via: `${host}: kube-controller-manager pid ${lister.p.pid} --kubeconfig ${lister.path} (its identity lists every resource: ${KCM_LISTS_ALL})`,
    rows: await storedInRemoved(get, removedBetween(lifecycle.kinds, release, to), release),
  };
}
