// Feature-gate spec tables at one Kubernetes version (issue 24): which source files register the
// gates each binary accepts, and the committed dump of those tables (flags/data/<v>/feature-gates.json,
// written by flags/analyzer/cmd/featuregates with go/ast). Reading it needs no Go.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDir } from './map.ts';
import type { GateData } from '../upgrade/gate-data.ts';
import type { FlagComponentName, PerComponent } from '../components/registry/index.ts';

export type { GateData, GateTable } from '../upgrade/gate-data.ts';

const K = 'k8s.io/kubernetes/pkg/features/kube_features.go';
const APISERVER = 'k8s.io/apiserver/pkg/features/kube_features.go';
const APIEXT = 'k8s.io/apiextensions-apiserver/pkg/features/kube_features.go';
const CLIENT = 'k8s.io/client-go/features/known_features.go';
const ZPAGES = 'k8s.io/component-base/zpages/features/kube_features.go';
const LOGS = 'k8s.io/component-base/logs/api/v1/kube_features.go';
const METRICS = 'k8s.io/component-base/metrics/features/kube_features.go';
const CM = 'k8s.io/controller-manager/pkg/features/kube_features.go';
const ETCD = 'go.etcd.io/etcd/server/v3/features/etcd_features.go';

/**
 * Every Kubernetes binary shares utilfeature.DefaultMutableFeatureGate. k8s.io/kubernetes/pkg/features
 * imports the apiserver, apiextensions, client-go, zpages and controller-manager gate packages and
 * registers them in its init (v1.36.3 kube_features.go:2839-2851); each cmd adds logsapi's gates
 * (e.g. cmd/kube-apiserver/app/server.go:66), and some add component-base/metrics' (kube-controller-manager
 * controllermanager.go:96, kube-scheduler server.go:86, kube-proxy server.go:90, kubelet pkg/kubelet/server/server.go:105).
 * etcd has its own gate (server/features/etcd_features.go, DefaultEtcdServerFeatureGates).
 */
const COMMON = [K, APISERVER, APIEXT, CLIENT, ZPAGES, LOGS, CM];
export const GATE_SOURCES: PerComponent<readonly string[], FlagComponentName> = {
  etcd: [ETCD],
  'kube-apiserver': COMMON,
  'kube-controller-manager': [...COMMON, METRICS],
  'kube-scheduler': [...COMMON, METRICS],
  kubelet: [...COMMON, METRICS],
  'kube-proxy': [...COMMON, METRICS],
};

/** The staging modules are tagged v0.<minor>.<patch> alongside k8s.io/kubernetes v1.<minor>.<patch>. */
function moduleVersion(module: string, kubernetes: string, etcd: string): string {
  if (module.startsWith('go.etcd.io/')) return etcd;
  return module === 'k8s.io/kubernetes' ? kubernetes : kubernetes.replace(/^v1\./, 'v0.');
}

/** `module@version/file` for each table at this pair of versions, as cmd/featuregates takes them. */
export function gateSourceArgs(kubernetes: string, etcd: string): string[] {
  const keys = [...new Set(Object.values(GATE_SOURCES).flat())];
  return keys.map((k) => {
    const module = k.startsWith('go.etcd.io/')
      ? 'go.etcd.io/etcd/server/v3'
      : k.split('/').slice(0, 2).join('/');
    return `${module}@${moduleVersion(module, kubernetes, etcd)}/${k.slice(module.length + 1)}`;
  });
}

export const GATE_FILE = 'feature-gates.json';

function gateDataFile(version: string): string {
  return join(dataDir(version), GATE_FILE);
}

const cache = new Map<string, GateData | null>();

/** The committed gate tables at a version, or null when none were generated. */
export function loadGateData(version: string): GateData | null {
  if (!cache.has(version)) {
    const file = gateDataFile(version);
    cache.set(
      version,
      existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as GateData) : null,
    );
  }
  return cache.get(version) ?? null;
}
