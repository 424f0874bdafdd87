import type { Phase } from '../phase.ts';
import { session, type WireContext } from '../context.ts';
import { COMPONENT_NAMES, componentsOn } from '../../components/registry/index.ts';
import { MANIFEST_PATH, parseManifest } from '../manifest.ts';
import { PENDING_DIR } from '../facts.ts';
import { BACKUP_ROOT } from '../backup.ts';
import { REMOTE_SNAPSHOT_DIR } from '../etcd-snapshot.ts';
import { ETCD_DATA_DIR } from '../../components/models/etcd.ts';
import { REGISTRY_DATA_DIR } from '../../components/models/registry.ts';
import { workerTeardownScript } from '../worker-teardown.ts';
import { unitOf } from '../../../lib/unit.ts';

function ancestors(path: string): string[] {
  const out: string[] = [];
  for (
    let d = path.slice(0, path.lastIndexOf('/'));
    d.length > 1;
    d = d.slice(0, d.lastIndexOf('/'))
  )
    out.push(d);
  return out;
}

async function teardownHost(ctx: WireContext, name: string, purgeData: boolean): Promise<void> {
  const host = ctx.inv.hosts.find((h) => h.name === name)!;
  const s = session(ctx, name);
  if (host.isWorker) {
    // Before the units go: it stops them in its own order and clears what Pods left (worker-teardown.ts).
    await ctx.wet.run(
      name,
      "stop the kubelet, kube-proxy and containerd; remove Pods' containers, mounts, the CNI bridge, pod routes, kube-proxy's nftables tables, the kubelet's cgroups and state",
      (w) =>
        w.exec(['sh', '-c', workerTeardownScript(host, ctx.inv.workerHosts)], {
          timeoutMs: 120_000,
        }),
    );
  }
  const units = [...COMPONENT_NAMES]
    .reverse()
    .filter((c) => componentsOn(host).includes(c))
    .map((c) => unitOf(c));
  const present = await s.exec(['systemctl', 'list-unit-files', '--no-legend', ...units], {
    allowFail: true,
  });
  const installed = units.filter((u) => present.stdout.includes(u));
  if (installed.length > 0) {
    await ctx.wet.run(name, `systemctl disable --now ${installed.join(' ')}`, (w) =>
      w.exec(['systemctl', 'disable', '--now', '--quiet', ...installed], { timeoutMs: 120_000 }),
    );
  }
  const m = await s.exec(['cat', MANIFEST_PATH], { allowFail: true });
  const paths = m.code === 0 ? parseManifest(m.stdout) : [];
  if (paths.length > 0) {
    await ctx.wet.run(
      name,
      `remove ${paths.length} files hardwire installed (${MANIFEST_PATH})`,
      (w) =>
        w.exec([
          'rm',
          '-rf',
          '--',
          ...paths,
          MANIFEST_PATH,
          PENDING_DIR,
          BACKUP_ROOT,
          REMOTE_SNAPSHOT_DIR,
        ]),
    );
    // Then the directories that only held them, deepest first; shared ones stay.
    const keep = new Set([
      '/usr/local/bin',
      '/etc/systemd/system',
      '/var/lib',
      '/etc',
      '/usr/local',
      '/usr',
      '/var',
    ]);
    const dirs = [
      ...new Set(
        [...paths, MANIFEST_PATH, `${PENDING_DIR}/x`, `${BACKUP_ROOT}/x`].flatMap((p) =>
          ancestors(p),
        ),
      ),
    ]
      .filter((d) => !keep.has(d))
      .sort((a, b) => b.length - a.length);
    await ctx.wet.run(name, `remove empty directories ${dirs.join(' ')}`, (w) =>
      w.exec(['rmdir', '--ignore-fail-on-non-empty', '--', ...dirs], { allowFail: true }),
    );
    await ctx.wet.run(name, 'systemctl daemon-reload', (w) =>
      w.exec(['systemctl', 'daemon-reload']),
    );
  }
  if (purgeData && host.isEtcd) {
    await ctx.wet.run(name, `remove etcd data ${ETCD_DATA_DIR} (--purge-data)`, (w) =>
      w.exec(['rm', '-rf', '--', ETCD_DATA_DIR]),
    );
  }
  // The registry's storage is data too: what wire pushed comes back at its next start, an image
  // added with `hardwire images add` does not.
  if (purgeData && host.isRegistry) {
    await ctx.wet.run(
      name,
      `remove the registry's storage ${REGISTRY_DATA_DIR} (--purge-data)`,
      (w) => w.exec(['rm', '-rf', '--', REGISTRY_DATA_DIR]),
    );
  }
}

export function teardownPhase(purgeData: boolean): Phase {
  return {
    id: 'teardown',
    title: `Stop and remove everything hardwire installed${purgeData ? ', and the etcd data' : ' (etcd data kept; --purge-data removes it)'}`,
    async run(ctx) {
      await Promise.all(ctx.inv.hosts.map((h) => teardownHost(ctx, h.name, purgeData)));
    },
  };
}
