// The CoreDNS addon's objects, checked against the example workers inventory and against what the
// rest of hardwire and kubeadm say: the kubelets' clusterDNS, the inventory's domain, no way out of
// the machine, and each source line core/addons/coredns.ts cites (re-opened in the Go module cache).
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { loadValidInventory } from '../core/validate/inventory.ts';
import { kubeletFields } from '../core/components/models/kubelet.ts';
import {
  ADDON_MODULES,
  COREDNS_CITES,
  COREDNS_IMAGE,
  corednsObjects,
} from '../core/addons/coredns.ts';
import { collectionPath, ownedDiff } from '../core/apply/phases/addons.ts';

const root = join(import.meta.dirname, '..');
const modcache = process.env.GOMODCACHE ?? join(homedir(), '.cache', 'hardwire', 'gomod');
const inv = loadValidInventory(join(root, 'hosts/example-workers.yaml'));

// Typed just enough to read what the tests look at.
interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  data?: { Corefile: string };
  spec: {
    clusterIP: string;
    replicas: number;
    ports: { port: number; protocol: string }[];
    template: {
      spec: {
        dnsPolicy: string;
        containers: {
          image: string;
          imagePullPolicy: string;
          args: string[];
          securityContext: Record<string, unknown>;
          livenessProbe: { httpGet: { path: string; port: string } };
          readinessProbe: { httpGet: { path: string; port: string } };
          ports: { name: string; containerPort: number }[];
        }[];
      };
    };
  };
}
const objects = (i = inv) => corednsObjects(i) as Obj[];
const byKind = (kind: string, i = inv) => objects(i).find((o) => o.kind === kind)!;

describe('corednsObjects on hosts/example-workers.yaml', () => {
  it("has kubeadm's six objects, in an order each can be created in", () => {
    expect(
      objects().map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`),
    ).toEqual([
      'ServiceAccount kube-system/coredns',
      'ClusterRole /system:coredns',
      'ClusterRoleBinding /system:coredns',
      'ConfigMap kube-system/coredns',
      'Deployment kube-system/coredns',
      'Service kube-system/kube-dns',
    ]);
  });

  it('kube-dns listens on the address every kubelet is told is the cluster DNS', () => {
    for (const host of inv.workerHosts) {
      const clusterDNS = kubeletFields({ inv, host }).find((f) => f.key === 'clusterDNS')!
        .value as string[];
      expect(byKind('Service').spec.clusterIP).toBe(clusterDNS[0]);
    }
    expect(byKind('Service').spec.clusterIP).toBe('10.96.0.10'); // serviceCIDR 10.96.0.0/12, by hand
    expect(byKind('Service').spec.ports.map((p) => `${p.port}/${p.protocol}`)).toEqual([
      '53/UDP',
      '53/TCP',
      '9153/TCP',
    ]);
  });

  it("the Corefile serves the inventory's domain and nothing forwards out of the cluster", () => {
    const corefile = (i = inv) => byKind('ConfigMap', i).data!.Corefile;
    expect(corefile()).toContain(`kubernetes ${inv.cluster.dnsDomain} in-addr.arpa ip6.arpa {`);
    const other = { ...inv, cluster: { ...inv.cluster, dnsDomain: 'lab.example' } };
    expect(corefile(other)).toContain('kubernetes lab.example in-addr.arpa ip6.arpa {');
    expect(corefile(other)).not.toContain('cluster.local');
    for (const plugin of ['errors', 'health {', 'ready', 'cache 30', 'loop', 'reload'])
      expect(corefile()).toMatch(new RegExp(`^\\s*${plugin}`, 'm'));
    // forward, and the plugins that can send a query elsewhere.
    expect(corefile()).not.toMatch(/^\s*(forward|proxy|grpc|etcd)\b/m);
    expect(corefile()).not.toContain('resolv.conf');
  });

  it("the container runs the local image, kubeadm's hardening and probes", () => {
    const pod = byKind('Deployment').spec.template.spec;
    expect(pod.containers).toHaveLength(1);
    const c = pod.containers[0]!;
    expect(c.image).toBe(COREDNS_IMAGE);
    expect(COREDNS_IMAGE).toBe('hardwire.local/coredns:v1.14.2');
    expect(c.imagePullPolicy).toBe('IfNotPresent');
    expect(c.args).toEqual(['-conf', '/etc/coredns/Corefile']);
    expect(c.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] },
      readOnlyRootFilesystem: true,
    });
    const port = (name: string) => c.ports.find((p) => p.name === name)?.containerPort;
    expect([c.livenessProbe.httpGet.path, port(c.livenessProbe.httpGet.port)]).toEqual([
      '/health',
      8080,
    ]);
    expect([c.readinessProbe.httpGet.path, port(c.readinessProbe.httpGet.port)]).toEqual([
      '/ready',
      8181,
    ]);
  });

  it("replicas: kubeadm's 2 with two workers to spread over, 1 with one", () => {
    expect(byKind('Deployment').spec.replicas).toBe(2);
    expect(
      byKind('Deployment', { ...inv, workerHosts: inv.workerHosts.slice(0, 1) }).spec.replicas,
    ).toBe(1);
  });

  it('each citation in core/addons/coredns.ts is listed, and its line holds what is recorded', () => {
    const src = readFileSync(join(root, 'core/addons/coredns.ts'), 'utf8');
    const refs = new Set(
      [...src.matchAll(/\b(K|CD) ([a-z][\w./-]*\.go):(\d+)/g)].map(
        ([, mod, file, line]) => `${mod} ${file}:${line}`,
      ),
    );
    const listed = new Set(COREDNS_CITES.map((c) => `${c.mod} ${c.file}:${c.line}`));
    expect(refs.size).toBeGreaterThan(15);
    expect(
      [...refs].filter((r) => !listed.has(r)),
      'cited but not in COREDNS_CITES',
    ).toEqual([]);
    expect(
      [...listed].filter((r) => !refs.has(r)),
      'in COREDNS_CITES but cited nowhere',
    ).toEqual([]);
    for (const c of COREDNS_CITES) {
      const path = join(modcache, ADDON_MODULES[c.mod], c.file);
      expect(existsSync(path), path).toBe(true);
      expect(
        readFileSync(path, 'utf8').split('\n')[c.line - 1],
        `${c.mod} ${c.file}:${c.line}`,
      ).toContain(c.holds);
    }
  });
});

describe("the addons phase's compare", () => {
  const deployment = byKind('Deployment') as unknown as { kind: string; spec: Obj['spec'] };
  it("a live object with the apiserver's defaults added is unchanged: a re-run writes nothing", () => {
    for (const o of objects()) {
      const live = JSON.parse(JSON.stringify(o)) as Obj & {
        metadata: Record<string, unknown>;
        spec?: Record<string, unknown>;
      };
      live.metadata.resourceVersion = '42';
      if (live.spec)
        Object.assign(live.spec, { clusterIPs: ['10.96.0.10'], revisionHistoryLimit: 10 });
      expect(ownedDiff(live, o), o.kind).toEqual([]);
    }
  });

  it('a changed image or replicas is named in the update message', () => {
    const live = JSON.parse(JSON.stringify(deployment)) as typeof deployment;
    live.spec.replicas = 1;
    live.spec.template.spec.containers[0]!.image = 'registry.k8s.io/coredns/coredns:v1.12.0';
    expect(ownedDiff(live, deployment)).toEqual([
      'replicas 1 -> 2',
      `image "registry.k8s.io/coredns/coredns:v1.12.0" -> "${COREDNS_IMAGE}"`,
    ]);
  });

  it('paths: core group under /api, others under /apis, cluster-scoped without a namespace', () => {
    expect(objects().map((o) => collectionPath(o))).toEqual([
      '/api/v1/namespaces/kube-system/serviceaccounts',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles',
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      '/api/v1/namespaces/kube-system/configmaps',
      '/apis/apps/v1/namespaces/kube-system/deployments',
      '/api/v1/namespaces/kube-system/services',
    ]);
  });
});
