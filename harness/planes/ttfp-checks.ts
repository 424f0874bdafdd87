// The four time-to-first-Pod questions (ttfp-watch.ts) asked of a plane: over SSH on its control-plane
// host with the plane's own kubectl (kubeadm, k0s), or through hardwire's admin kubeconfig.
import type { Session } from '../../core/transport/index.ts';
import type { KubeCreds } from '../../core/transport/kube-api.ts';
import { kubeJson, kubeRequest } from '../../core/transport/kube-api.ts';
import type { TtfpChecks } from './ttfp-watch.ts';

const READY = '{.status.conditions[?(@.type=="Ready")].status}';

/** Checks run on `s` (the control-plane host): `cert` the apiserver's serving cert, `kubectl` the argv prefix that reaches the cluster as admin. */
export function hostChecks(
  s: Session,
  cert: string,
  kubectl: string[],
  worker: string,
  pod: { ns: string; name: string },
): TtfpChecks {
  const out = async (args: string[]) => {
    const r = await s.exec([...kubectl, '--request-timeout=5s', ...args], {
      allowFail: true,
      timeoutMs: 15_000,
    });
    return r.code === 0 ? r.stdout.trim() : '';
  };
  return {
    certs: async () =>
      (await s.exec(['test', '-s', cert], { allowFail: true, timeoutMs: 15_000 })).code === 0,
    controlPlaneReady: async () => (await out(['get', '--raw', '/readyz'])) === 'ok',
    nodeReady: async () =>
      (await out(['get', 'node', worker, '-o', `jsonpath=${READY}`])) === 'True',
    podRunning: async () =>
      (await out([
        'get',
        'pod',
        pod.name,
        '-n',
        pod.ns,
        '-o',
        'jsonpath={.status.phase} {.spec.nodeName}',
      ])) === `Running ${worker}`,
  };
}

/** hardwire: the cert on its host over SSH; the API through the admin kubeconfig wire writes (absent until its pki phase). */
export function hardwireChecks(
  s: Session,
  cert: string,
  creds: () => KubeCreds,
  worker: string,
  pod: { ns: string; name: string },
): TtfpChecks {
  type Obj = {
    spec?: { nodeName?: string };
    status?: { phase?: string; conditions?: { type: string; status: string }[] };
  };
  const get = async (path: string) =>
    (await kubeJson<Obj>(creds(), 'GET', path, { timeoutMs: 5000, allow: [404] })).json;
  return {
    certs: async () =>
      (await s.exec(['test', '-s', cert], { allowFail: true, timeoutMs: 15_000 })).code === 0,
    controlPlaneReady: async () => {
      const r = await kubeRequest(creds(), 'GET', '/readyz', { timeoutMs: 5000 });
      return r.status === 200 && r.body.trim() === 'ok';
    },
    nodeReady: async () =>
      (await get(`/api/v1/nodes/${worker}`)).status?.conditions?.find((c) => c.type === 'Ready')
        ?.status === 'True',
    podRunning: async () => {
      const p = await get(`/api/v1/namespaces/${pod.ns}/pods/${pod.name}`);
      return p.status?.phase === 'Running' && p.spec?.nodeName === worker;
    },
  };
}
