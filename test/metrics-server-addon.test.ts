// The metrics-server addon (cluster.addons, issue 44) as render sees it, without hosts: the inventory
// field and its one-line errors, the objects core/addons/metrics-server.ts renders, the image the
// registry serves and pushes under registry.k8s.io's name, containerd's registry.k8s.io mirror, and
// each line of metrics-server v0.8.0 the addon cites (re-opened in the Go module cache).
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseInventory } from '../core/inventory/load.ts';
import { InputError } from '../lib/errors.ts';
import {
  METRICS_APISERVICE,
  METRICS_SERVER_CITES,
  METRICS_SERVER_IMAGE,
  METRICS_SERVER_MODULE,
  metricsServerObjects,
} from '../core/addons/metrics-server.ts';
import { collectionPath, optInObjects, ownedDiff } from '../core/apply/phases/addons.ts';
import { ADDON_IMAGES, mirroredRegistries, servedImages } from '../core/components/images.ts';
import {
  containerdModel,
  DOCKER_IO_HOSTS,
  hostsTomlPath,
} from '../core/components/models/containerd.ts';
import { registryModel } from '../core/components/models/registry.ts';
import { modcache } from './helpers/modcache.ts';

const root = join(import.meta.dirname, '..');
const inventory = (cluster: string, workers = true) =>
  parseInventory(`apiVersion: hardwire/v1
kind: Inventory
cluster: {name: c${cluster}}
hosts:
  - {name: cp-0, address: 198.51.100.10, roles: [etcd, control-plane]}
${workers ? '  - {name: w-1, address: 198.51.100.21, roles: [worker]}\n' : ''}`);
const refused = (cluster: string, workers = true) => {
  try {
    inventory(cluster, workers);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as InputError).message;
  }
  throw new Error('the inventory loaded');
};

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  roleRef?: { kind: string; name: string };
  spec?: {
    selector?: { matchLabels?: Record<string, string> } & Record<string, string>;
    service?: { name: string; namespace: string; port: number };
    ports?: { port: number; targetPort: string }[];
    template?: {
      metadata: { labels: Record<string, string> };
      spec: {
        serviceAccountName: string;
        containers: {
          image: string;
          args: string[];
          ports: { name: string; containerPort: number }[];
        }[];
      };
    };
  };
}
const objects = metricsServerObjects() as Obj[];
const byKind = (kind: string) => objects.find((o) => o.kind === kind)!;

describe('cluster.addons in the inventory', () => {
  it('defaults to none, and metrics-server loads on a cluster with workers', () => {
    expect(inventory('').addons).toEqual([]);
    expect(inventory(', addons: [metrics-server]').addons).toEqual(['metrics-server']);
  });

  it('refuses, in one line naming the field and the fix, an unknown name, a repeat, cert-manager, and a cluster with no worker', () => {
    expect(refused(', addons: [metric-server]')).toBe(
      'cluster.addons[0]: unknown addon "metric-server"; valid addons are metrics-server',
    );
    expect(refused(', addons: [metrics-server, metrics-server]')).toBe(
      'cluster.addons[1]: "metrics-server" is listed twice; list each addon once',
    );
    expect(refused(', addons: [cert-manager]')).toMatch(
      /^cluster\.addons\[0\]: cert-manager cannot be built here yet .*; remove it, valid addons are metrics-server$/,
    );
    expect(refused(', addons: [metrics-server]', false)).toBe(
      'cluster.addons: metrics-server run as Pods and no host has the worker role; give a host "worker" or remove cluster.addons',
    );
    expect(refused(', addons: metrics-server')).toMatch(/^cluster\.addons: expected array/);
    for (const line of [refused(', addons: [x]'), refused(', addons: [cert-manager]')])
      expect(line).not.toContain('\n');
  });
});

describe('metricsServerObjects', () => {
  it("has upstream's nine objects, in an order each can be created in, each with a known API path", () => {
    expect(
      objects.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`),
    ).toEqual([
      'ServiceAccount kube-system/metrics-server',
      'ClusterRole /system:aggregated-metrics-reader',
      'ClusterRole /system:metrics-server',
      'RoleBinding kube-system/metrics-server-auth-reader',
      'ClusterRoleBinding /metrics-server:system:auth-delegator',
      'ClusterRoleBinding /system:metrics-server',
      'Service kube-system/metrics-server',
      'Deployment kube-system/metrics-server',
      `APIService /${METRICS_APISERVICE}`,
    ]);
    expect(collectionPath(byKind('APIService'))).toBe(
      '/apis/apiregistration.k8s.io/v1/apiservices',
    );
    expect(collectionPath(byKind('RoleBinding'))).toBe(
      '/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings',
    );
    for (const o of objects) expect(o.metadata.labels?.['k8s-app']).toBe('metrics-server');
  });

  it('the Pod runs the image the registry serves under registry.k8s.io, verifies the kubelets with the cluster CA and never skips it', () => {
    const c = byKind('Deployment').spec!.template!.spec.containers[0]!;
    expect(c.image).toBe('registry.k8s.io/metrics-server/metrics-server:v0.8.0');
    expect(METRICS_SERVER_IMAGE).toBe(ADDON_IMAGES['metrics-server'].spec.ref);
    const served = ADDON_IMAGES['metrics-server'];
    expect(`${served.upstream}/${served.as[0]}`).toBe(c.image);
    expect(c.args).toContain(
      '--kubelet-certificate-authority=/var/run/secrets/kubernetes.io/serviceaccount/ca.crt',
    );
    expect(c.args.some((a) => a.startsWith('--kubelet-insecure-tls'))).toBe(false);
    expect(c.args).toContain('--secure-port=10250');
    expect(c.ports).toEqual([{ name: 'https', containerPort: 10250, protocol: 'TCP' }]);
  });

  it('the Service selects the Pod and the APIService names the Service; the bindings name its ServiceAccount', () => {
    const d = byKind('Deployment').spec!;
    const svc = byKind('Service');
    expect(svc.spec!.selector).toEqual(d.template!.metadata.labels);
    expect(d.selector!.matchLabels).toEqual(d.template!.metadata.labels);
    expect(svc.spec!.ports![0]!.targetPort).toBe('https');
    expect(byKind('APIService').spec!.service).toEqual({
      name: svc.metadata.name,
      namespace: svc.metadata.namespace,
      port: svc.spec!.ports![0]!.port,
    });
    expect(d.template!.spec.serviceAccountName).toBe(byKind('ServiceAccount').metadata.name);
    expect(
      objects
        .filter((o) => o.kind.endsWith('Binding'))
        .map((o) => `${o.roleRef!.kind}/${o.roleRef!.name}`),
    ).toEqual([
      'Role/extension-apiserver-authentication-reader',
      'ClusterRole/system:auth-delegator',
      'ClusterRole/system:metrics-server',
    ]);
  });

  it('is applied only when the inventory lists it', () => {
    expect(optInObjects(inventory(''))).toEqual([]);
    expect(optInObjects(inventory(', addons: [metrics-server]'))).toEqual(objects);
  });

  it("a live object with the apiserver's defaults added is unchanged: a re-run writes nothing", () => {
    for (const o of objects) {
      const live = JSON.parse(JSON.stringify(o)) as Obj & { metadata: Record<string, unknown> };
      live.metadata.resourceVersion = '7';
      if (live.spec)
        Object.assign(live.spec, { clusterIPs: ['10.96.0.77'], progressDeadlineSeconds: 600 });
      // Only the fields hardwire decides are compared; the APIService's whole spec is its own.
      const diff = ownedDiff(live, o);
      if (o.kind === 'APIService') expect(diff).toHaveLength(1);
      else expect(diff, o.kind).toEqual([]);
    }
    const api = byKind('APIService');
    expect(ownedDiff(JSON.parse(JSON.stringify(api)), api)).toEqual([]);
  });
});

describe('the image and the mirror', () => {
  it("the lab registry pushes it under registry.k8s.io's name only when the addon is on", () => {
    const on = inventory(', addons: [metrics-server]');
    const off = inventory('');
    const push = (inv: typeof on) =>
      registryModel({ inv, host: inv.hosts[0]! })
        .directives!.filter((d) => d.key === 'ExecStartPost')
        .map((d) => d.value);
    expect(push(on).filter((p) => p.includes('metrics-server'))).toEqual([
      '+/usr/local/bin/imagebuild -push /var/lib/hardwire/registry-images/metrics-server.tar -registry 127.0.0.1:5000 -ca /etc/kubernetes/pki/ca.crt -as metrics-server/metrics-server:v0.8.0',
    ]);
    expect(push(off).some((p) => p.includes('metrics-server'))).toBe(false);
    expect(Object.keys(servedImages(['metrics-server']))).toEqual([
      'busybox',
      'nginx',
      'metrics-server',
    ]);
  });

  it("each worker's containerd names the lab registry as registry.k8s.io's mirror too, only with the addon", () => {
    expect(mirroredRegistries([])).toEqual(['docker.io']);
    expect(mirroredRegistries(['metrics-server'])).toEqual(['docker.io', 'registry.k8s.io']);
    const files = (inv: ReturnType<typeof inventory>) =>
      containerdModel({ inv, host: inv.workerHosts[0]! }).files!;
    const on = files(inventory(', addons: [metrics-server]'));
    const k8s = on.find((f) => f.path === hostsTomlPath('registry.k8s.io'))!;
    expect(k8s.path).toBe('/etc/containerd/certs.d/registry.k8s.io/hosts.toml');
    expect(k8s.content).toContain('server = "https://registry.k8s.io"');
    expect(k8s.content).toContain('[host."https://198.51.100.10:5000"]');
    expect(k8s.content).toContain('capabilities = ["pull", "resolve"]');
    expect(on.some((f) => f.path === DOCKER_IO_HOSTS)).toBe(true);
    expect(files(inventory('')).some((f) => f.path === hostsTomlPath('registry.k8s.io'))).toBe(
      false,
    );
  });
});

describe("core/addons/metrics-server.ts's citations", () => {
  it('each one is listed, and its line of metrics-server v0.8.0 holds what is recorded', () => {
    const src = readFileSync(join(root, 'core/addons/metrics-server.ts'), 'utf8');
    const refs = new Set(
      [...src.matchAll(/\bMS ([a-z][\w./-]*\.(?:go|yaml)):(\d+)((?:, :\d+)*)/g)].flatMap(
        ([, file, line, more]) => [
          `${file}:${line}`,
          ...[...(more ?? '').matchAll(/:(\d+)/g)].map(([, l]) => `${file}:${l}`),
        ],
      ),
    );
    const listed = new Set(METRICS_SERVER_CITES.map((c) => `${c.file}:${c.line}`));
    expect(refs.size).toBeGreaterThan(15);
    expect(
      [...refs].filter((r) => !listed.has(r)),
      'cited but not listed',
    ).toEqual([]);
    expect(
      [...listed].filter((r) => !refs.has(r)),
      'listed but cited nowhere',
    ).toEqual([]);
    for (const c of METRICS_SERVER_CITES) {
      const path = join(modcache, METRICS_SERVER_MODULE, c.file);
      expect(existsSync(path), `${path} (go mod download ${METRICS_SERVER_MODULE})`).toBe(true);
      expect(
        readFileSync(path, 'utf8').split('\n')[c.line - 1],
        `MS ${c.file}:${c.line}`,
      ).toContain(c.holds);
    }
  });
});
