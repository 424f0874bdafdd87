// An audit report as the audit builds it, from hardwire's rendered hosts (example-workers.yaml's
// units and config files) instead of a live host's /proc: for tests with no lab.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hardwire } from './cli.ts';
import { tempDir } from './tmp.ts';
import { execStartArgv } from '../../harness/planes/normalize.ts';
import { mapConfig, mapFlags, mapFor } from '../../harness/audit/flags.ts';
import type { AuditProcess, AuditReport } from '../../harness/audit/types.ts';
import { loadFlagMap } from '../../core/flags/map.ts';
import { PINNED_KUBERNETES } from '../../lib/constants.ts';
import { repoRoot } from '../../lib/paths.ts';

/** example-workers.yaml rendered once into a temp dir: its hosts directory. */
export function renderedHosts(): string {
  const state = tempDir('hardwire-audit-fixture-');
  const r = hardwire([
    'render',
    '--inventory',
    join(repoRoot, 'hosts', 'example-workers.yaml'),
    '--state-dir',
    state,
  ]);
  if (r.code !== 0) throw new Error(`render exited ${r.code}: ${r.stderr}`);
  return join(state, 'demo', 'hosts');
}

const unitText = (hosts: string, host: string, c: string) =>
  readFileSync(join(hosts, host, 'etc/systemd/system', `${c}.service`), 'utf8');

export function renderedReport(hosts: string, extra: string[] = []): AuditReport {
  const etcdVersion = loadFlagMap('etcd', PINNED_KUBERNETES).componentVersion;
  const proc = (host: string, c: string, config?: string): AuditProcess => {
    const version = c === 'etcd' ? etcdVersion : PINNED_KUBERNETES;
    const m = mapFor(c, version);
    const argv = [
      ...execStartArgv(unitText(hosts, host, c)),
      ...(c === 'kube-apiserver' ? extra : []),
    ];
    return {
      component: c,
      pid: 1,
      argv,
      version,
      versionSource: 'rendered',
      flags: mapFlags(argv, m),
      notes: [],
      ...(config
        ? {
            config: {
              path: config,
              source: config,
              fields: mapConfig(readFileSync(join(hosts, host, config), 'utf8'), m),
            },
          }
        : {}),
    };
  };
  const host = (name: string, processes: AuditProcess[]) => ({
    name,
    address: '198.51.100.1',
    reachable: true,
    processes,
    certs: [],
    notes: [],
  });
  return {
    generatedAt: '',
    partial: [],
    hosts: [
      host(
        'cp-0',
        ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'].map((c) =>
          proc('cp-0', c),
        ),
      ),
      ...['w-1', 'w-2'].map((w) =>
        host(w, [
          proc(w, 'kubelet', 'var/lib/kubelet/config.yaml'),
          proc(w, 'kube-proxy', 'var/lib/kube-proxy/config.conf'),
        ]),
      ),
    ],
  };
}
