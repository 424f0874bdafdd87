// etcd's first boot under `flags prove`, checked on the host (test/helpers/etcd-first-boot.ts reads
// it): the data dir etcd.service starts on again is, file for file, the one it stopped on; the
// member, the cluster, its keys and its revision are those from before; the apiserver serves again
// and the stopped units are active; the routes and links are those from before; and the debug
// etcd's journal shows it bootstrapped a new cluster in an empty data dir.
import { randomUUID } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { remote, type WiredLab } from './lab.ts';
import {
  afterFirstBoot,
  armFirstBoot,
  disarm,
  listings,
  UNITS,
  type EtcdView,
} from './etcd-first-boot.ts';

export function firstBootEvidence(lab: () => WiredLab): {
  arm: () => Promise<void>;
  suite: () => void;
} {
  const token = randomUUID();
  let before: EtcdView | undefined;
  let since = '';
  const host = async () => lab().lab.ssh(lab().lab.info.hosts[0]!.name);
  const withHost = async <T>(
    fn: (s: Awaited<ReturnType<typeof host>>) => Promise<T>,
  ): Promise<T> => {
    const s = await host();
    try {
      return await fn(s);
    } finally {
      await s.close();
    }
  };
  const arm = () =>
    withHost(async (s) => {
      since = await remote(s, ['date', '+%s']);
      before = await armFirstBoot(s, token);
    });
  const suite = () => {
    afterAll(async () => {
      if (before) await withHost(disarm);
    });

    it("etcd.service starts again on the data dir it stopped on: every file's mode, owner, size and sha256sum equal", async () => {
      const seen = await withHost(listings);
      // Stopped once by prove, started once by prove's undo, and nothing in between.
      expect(seen.map((x) => x.event)).toEqual(['stop', 'start']);
      const [stop, start] = seen.map((x) => x.text);
      expect(stop).toMatch(/ \.\/member\/snap\/db$/m);
      expect(stop).toMatch(/ \.\/member\/wal\/0000000000000000-0000000000000000\.wal$/m);
      expect(start).toBe(stop);
    });

    it("the member, the cluster, the test's key and the namespaces are those from before; the revision has not gone back", async () => {
      const after = await withHost(afterFirstBoot);
      expect(before).toBeDefined();
      expect(after.memberId).toBe(before!.memberId);
      expect(after.clusterId).toBe(before!.clusterId);
      expect(after.marker).toBe(before!.marker);
      expect(after.marker).toContain(token);
      expect(after.namespaces).toBe(before!.namespaces);
      expect(after.revision).toBeGreaterThanOrEqual(before!.revision);
      // The apiserver serves again, and each unit prove stopped runs again.
      expect(after.readyz).toBe('ok');
      expect(after.units.split('\n')).toEqual(UNITS.map(() => 'active'));
      // The default route prove added for the proof is gone, with its link.
      expect(after.routes).toBe(before!.routes);
      expect(after.links).toBe(before!.links);
    });

    it('the debug etcd bootstrapped a new cluster in an empty data dir (its own journal)', async () => {
      const text = await withHost((s) =>
        remote(s, [
          'journalctl',
          '-u',
          'hardwire-prove-etcd.service',
          '--since',
          `@${since}`,
          '-o',
          'cat',
          '--no-pager',
        ]),
      );
      expect(text).toMatch(
        /"msg":"Initialize and start etcd server","data-dir":"\/var\/lib\/etcd","dir-type":"empty"/,
      );
      expect(text).not.toMatch(/server has already been initialized/);
      // A new key space (revision 1), and the cluster version set for the first time.
      expect(text).toMatch(/"msg":"kvstore restored","current-rev":1}/);
      expect(text).toMatch(/"msg":"set initial cluster version"/);
    });
  };
  return { arm, suite };
}
