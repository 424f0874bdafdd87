// Components: real binaries built from the Go modules, the verified cache, the release download
// path against a loopback server, and the local-directory source.
// The build tests use the real cache ($HARDWIRE_CACHE or ~/.cache/hardwire) so that CI on a warm
// machine takes seconds; on a fresh machine the first build takes minutes (hence the long timeout).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { serveFiles } from './helpers/file-server.ts';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { InputError, StepError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { ensureAll, ensureBinary, listBinaries } from '../core/components/binaries/index.ts';
import { versionsFor, KUBERNETES_NAMES, goArch } from '../core/components/binaries/catalog.ts';
import { checksumFor, DownloadError } from '../core/components/binaries/fetch.ts';
import { cacheDir, repoRoot } from '../lib/paths.ts';
import { hardwire, type CliResult } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';

const COLD_BUILD_MS = 60 * 60_000;

function recorder(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => lines.push(m),
    warn: (m) => lines.push(`warning: ${m}`),
    step: (m) => lines.push(`==> ${m}`),
  };
}

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** Runs fn with HARDWIRE_CACHE pointing at a fresh directory (this worker only). */
async function withCache<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const saved = process.env.HARDWIRE_CACHE;
  const dir = tempDir('hardwire-cache-');
  process.env.HARDWIRE_CACHE = dir;
  try {
    return await fn(dir);
  } finally {
    if (saved === undefined) delete process.env.HARDWIRE_CACHE;
    else process.env.HARDWIRE_CACHE = saved;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The CLI in a child process without blocking this event loop (the loopback server lives here). */
function hardwireAsync(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'cli', 'hardwire.ts'), ...args],
      { cwd: repoRoot, env: { ...process.env, ...env }, timeout: 120_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function script(path: string, lines: string[]): void {
  writeFileSync(path, `#!/bin/sh\n${lines.map((l) => `echo '${l}'`).join('\n')}\n`);
  chmodSync(path, 0o755);
}

describe('version table', () => {
  it('derives etcd and k0s from the Kubernetes version and refuses unknown versions', () => {
    expect(versionsFor()).toMatchObject({
      kubernetes: 'v1.36.3',
      etcd: 'v3.6.8',
      k0s: 'v1.36.3+k0s.2',
    });
    expect(() => versionsFor('v1.35.0')).toThrow(InputError);
    expect(() => versionsFor('v1.35.0')).toThrow(/v1\.35\.0 has no etcd\/k0s pairing/);
  });
});

describe('Go module builds (real cache)', () => {
  const names = [...KUBERNETES_NAMES, 'etcd', 'etcdctl'] as const;

  it(
    'builds Kubernetes and etcd binaries that report their real versions',
    async () => {
      const log = recorder();
      const got = await ensureAll(names, { source: 'build', log });
      expect(got.map((b) => b.name)).toEqual(names);
      for (const b of got) {
        expect(b.source).toBe('build');
        expect(sha256(b.path)).toBe(b.sha256);
      }
      const path = (n: string) => got.find((b) => b.name === n)!.path;
      const out = (n: string, args: string[]) => execFileSync(path(n), args, { encoding: 'utf8' });
      expect(out('kube-apiserver', ['--version']).trim()).toBe('Kubernetes v1.36.3');
      expect(out('kube-controller-manager', ['--version']).trim()).toBe('Kubernetes v1.36.3');
      expect(out('kube-scheduler', ['--version']).trim()).toBe('Kubernetes v1.36.3');
      expect(out('kubeadm', ['version', '-o', 'short']).trim()).toBe('v1.36.3');
      expect(JSON.parse(out('kubeadm', ['version', '-o', 'json'])).clientVersion).toMatchObject({
        gitVersion: 'v1.36.3',
        major: '1',
        minor: '36',
        gitTreeState: 'clean',
      });
      expect(out('kubectl', ['version', '--client'])).toMatch(/^Client Version: v1\.36\.3$/m);
      expect(out('etcd', ['--version'])).toMatch(/^etcd Version: 3\.6\.8$/m);
      expect(out('etcdctl', ['version'])).toMatch(/^etcdctl version: 3\.6\.8$/m);
      // Static binaries, so they run on any Linux host they are copied to.
      expect(execFileSync('file', [path('kube-apiserver')], { encoding: 'utf8' })).toMatch(
        /statically linked/,
      );
    },
    COLD_BUILD_MS,
  );

  it(
    'a second build with warm caches rebuilds nothing and finishes in seconds',
    () => {
      // Every cached file of the binaries this build covers, as the file system has it: a rebuild or
      // re-copy changes its inode or mtime. (Only these: other binaries may land in a shared cache meanwhile.)
      const stats = () =>
        Object.fromEntries(
          names
            .flatMap((n) =>
              readdirSync(join(cacheDir(), 'bin', n), { recursive: true, withFileTypes: true }),
            )
            .filter((e) => e.isFile())
            .map((e) => {
              const p = join(e.parentPath, e.name);
              const st = statSync(p);
              return [p, `${st.ino} ${st.size} ${st.mtimeMs}`];
            }),
        );
      const before = stats();
      const started = Date.now();
      const r = hardwire(['components', 'build', 'kubernetes', 'etcd', 'etcdctl', '--json'], {
        timeoutMs: COLD_BUILD_MS,
      });
      const ms = Date.now() - started;
      expect(r.code, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout) as {
        binaries: Array<{ name: string; acquired: boolean; source: string }>;
      };
      expect(doc.binaries).toHaveLength(7);
      expect(doc.binaries.filter((b) => b.acquired)).toEqual([]);
      expect(r.stderr).not.toMatch(/go build/);
      expect(Object.keys(before).length).toBeGreaterThanOrEqual(7);
      // Entries of other versions may appear meanwhile (a lane building its own); none may change.
      const after = stats();
      expect(
        Object.fromEntries(Object.keys(before).map((k) => [k, after[k]])),
        'no cached binary was rewritten',
      ).toEqual(before);
      // Generous: building any one of these takes minutes; the no-op only reads the cache's records and
      // probes versions, which a loaded 2-core machine can still stretch to tens of seconds.
      expect(ms).toBeLessThan(120_000);
    },
    COLD_BUILD_MS,
  );

  it('lists every cached binary with name, version, path, sha256 and source', () => {
    // A listing re-hashes every entry but rewrites no verification record whose binary is unchanged:
    // another process (a lane's warm-cache check) may be comparing them meanwhile.
    const records = () =>
      Object.fromEntries(
        readdirSync(join(cacheDir(), 'bin'), { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile() && e.name === 'verified.json')
          .map((e) => {
            const st = statSync(join(e.parentPath, e.name));
            return [join(e.parentPath, e.name), `${st.ino} ${st.mtimeMs}`];
          }),
      );
    const before = records();
    const r = hardwire(['components', 'list', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const after = records();
    expect(Object.keys(before).length).toBeGreaterThanOrEqual(7);
    expect(
      Object.fromEntries(Object.keys(before).map((k) => [k, after[k]])),
      'records rewritten',
    ).toEqual(before);
    const doc = JSON.parse(r.stdout) as { binaries: Array<Record<string, string>> };
    const api = doc.binaries.find((b) => b.name === 'kube-apiserver' && b.version === 'v1.36.3')!;
    expect(api).toBeDefined();
    expect(api.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(api.sha256).toBe(sha256(api.path!));
    expect(['build', 'fetch', 'local']).toContain(api.source);
  });
});

describe('corrupted cache entries', () => {
  it(
    'detects a changed sha256, never hands the binary out, and rebuilds it',
    async () => {
      await withCache(async (dir) => {
        const first = await ensureBinary('etcdctl', { source: 'build' });
        expect(first.path.startsWith(dir)).toBe(true);
        expect(first.path).toBe(join(dir, 'bin', 'etcdctl', 'v3.6.8', 'etcdctl'));
        // Corrupt it: same size, one byte flipped in the middle.
        const bytes = readFileSync(first.path);
        const mid = bytes.length >> 1;
        bytes[mid] = bytes[mid]! ^ 0xff;
        writeFileSync(first.path, bytes);
        expect(sha256(first.path)).not.toBe(first.sha256);

        const listed = await listBinaries();
        expect(listed.find((b) => b.name === 'etcdctl')?.source).toBe('corrupt');

        const log = recorder();
        process.env.HARDWIRE_PROGRESS_MS = '100';
        const again = await ensureBinary('etcdctl', { source: 'build', log }).finally(() => {
          delete process.env.HARDWIRE_PROGRESS_MS;
        });
        expect(log.lines.join('\n')).toMatch(
          /still building etcd v3\.6\.8 \(etcdctl\): \d+s elapsed/,
        );
        expect(log.lines.join('\n')).toMatch(
          /etcdctl v3\.6\.8 is corrupt: sha256 [0-9a-f]{64} does not match its manifest/,
        );
        expect(log.lines.join('\n')).toMatch(/go build etcd v3\.6\.8/);
        expect(again.acquired).toBe(true);
        expect(again.source).toBe('build');
        // The build is reproducible, so the rebuilt binary is byte-identical to the first one.
        expect(again.sha256).toBe(first.sha256);
        expect(sha256(again.path)).toBe(first.sha256);
        expect(execFileSync(again.path, ['version'], { encoding: 'utf8' })).toMatch(
          /^etcdctl version: 3\.6\.8$/m,
        );
      });
    },
    COLD_BUILD_MS,
  );

  it(
    'builds a group once when several callers ask at the same time',
    async () => {
      await withCache(async () => {
        const log = recorder();
        const [a, b] = await Promise.all([
          ensureBinary('etcd', { source: 'build', log }),
          ensureBinary('etcd', { source: 'build', log }),
        ]);
        expect(log.lines.filter((l) => l.startsWith('==> go build'))).toHaveLength(1);
        expect([a.acquired, b.acquired].sort()).toEqual([false, true]);
        expect(a.sha256).toBe(b.sha256);
      });
    },
    COLD_BUILD_MS,
  );

  it(
    'falls back to a Go build when the release server cannot be reached',
    async () => {
      await withCache(async () => {
        const log = recorder();
        const port = await closedPort();
        const got = await ensureBinary('etcdctl', {
          urls: { etcd: `http://127.0.0.1:${port}` },
          log,
        });
        expect(got.source).toBe('build');
        expect(log.lines.join('\n')).toMatch(
          new RegExp(
            `cannot reach http://127\\.0\\.0\\.1:${port}/v3\\.6\\.8/SHA256SUMS: ECONNREFUSED; building etcd v3\\.6\\.8 from Go modules instead`,
          ),
        );
      });
    },
    COLD_BUILD_MS,
  );
});

describe('release download over loopback', () => {
  let closeServer: () => Promise<void>;
  let base: string;
  const files = new Map<string, Buffer>();
  const arch = goArch();
  const work = tempDir('hardwire-release-');
  const stem = `etcd-v3.6.8-linux-${arch}`;

  beforeAll(async () => {
    // etcd: a tarball laid out as upstream's, with stand-in binaries that state their version.
    mkdirSync(join(work, stem));
    script(join(work, stem, 'etcd'), ['etcd Version: 3.6.8', 'Git SHA: test']);
    script(join(work, stem, 'etcdctl'), ['etcdctl version: 3.6.8', 'API version: 3.6']);
    execFileSync('tar', ['-czf', join(work, 'etcd.tgz'), '-C', work, stem]);
    const tgz = readFileSync(join(work, 'etcd.tgz'));
    const tgzSha = createHash('sha256').update(tgz).digest('hex');
    files.set(`/good/etcd/v3.6.8/${stem}.tar.gz`, tgz);
    files.set(
      '/good/etcd/v3.6.8/SHA256SUMS',
      Buffer.from(`${'0'.repeat(64)}  etcd-v3.6.8-darwin-arm64.zip\n${tgzSha}  ${stem}.tar.gz\n`),
    );
    files.set(`/bad/etcd/v3.6.8/${stem}.tar.gz`, tgz);
    files.set('/bad/etcd/v3.6.8/SHA256SUMS', Buffer.from(`${'e'.repeat(64)}  ${stem}.tar.gz\n`));
    // Kubernetes: bare binary plus <name>.sha256 holding only the digest.
    script(join(work, 'kubectl'), ['Client Version: v1.36.3', 'Kustomize Version: v5.8.1']);
    const kubectl = readFileSync(join(work, 'kubectl'));
    files.set(`/good/k8s/v1.36.3/bin/linux/${arch}/kubectl`, kubectl);
    files.set(
      `/good/k8s/v1.36.3/bin/linux/${arch}/kubectl.sha256`,
      Buffer.from(createHash('sha256').update(kubectl).digest('hex')),
    );
    // k0s: the "+" of the tag is percent-encoded in the URL; sha256sums.txt is "sha256sum -b" output.
    script(join(work, 'k0s'), ['v1.36.3+k0s.2']);
    const k0s = readFileSync(join(work, 'k0s'));
    files.set(`/good/k0s/v1.36.3%2Bk0s.2/k0s-v1.36.3%2Bk0s.2-${arch}`, k0s);
    files.set(
      '/good/k0s/v1.36.3%2Bk0s.2/sha256sums.txt',
      Buffer.from(`${createHash('sha256').update(k0s).digest('hex')} *k0s-v1.36.3+k0s.2-${arch}\n`),
    );
    // A release whose binary says the wrong version, with a correct checksum.
    script(join(work, 'kube-scheduler'), ['Kubernetes v1.35.0']);
    const sched = readFileSync(join(work, 'kube-scheduler'));
    files.set(`/good/k8s/v1.36.3/bin/linux/${arch}/kube-scheduler`, sched);
    files.set(
      `/good/k8s/v1.36.3/bin/linux/${arch}/kube-scheduler.sha256`,
      Buffer.from(createHash('sha256').update(sched).digest('hex')),
    );

    ({ base, close: closeServer } = await serveFiles(files));
  });
  afterAll(async () => {
    await closeServer();
    rmSync(work, { recursive: true, force: true });
  });

  it('parses both checksum file formats', () => {
    expect(checksumFor(`${'a'.repeat(64)}\n`, 'kubectl')).toBe('a'.repeat(64));
    expect(checksumFor(`${'b'.repeat(64)}  x.tar.gz\n${'c'.repeat(64)} *y\n`, 'y')).toBe(
      'c'.repeat(64),
    );
    expect(checksumFor(`${'b'.repeat(64)}  x.tar.gz\n`, 'z')).toBeUndefined();
  });

  it('downloads, verifies and caches etcd, Kubernetes and k0s release binaries', async () => {
    await withCache(async (dir) => {
      const urls = {
        etcd: `${base}/good/etcd`,
        kubernetes: `${base}/good/k8s`,
        k0s: `${base}/good/k0s`,
      };
      const got = await ensureAll(['etcd', 'etcdctl', 'kubectl', 'k0s'], { source: 'fetch', urls });
      for (const b of got) {
        expect(b.source).toBe('fetch');
        expect(b.acquired).toBe(true);
        expect(b.path).toBe(join(dir, 'bin', b.name, b.version, b.name));
        expect(sha256(b.path)).toBe(b.sha256);
      }
      expect(got.map((b) => b.version)).toEqual(['v3.6.8', 'v3.6.8', 'v1.36.3', 'v1.36.3+k0s.2']);
      expect(got[0]!.sha256).toBe(sha256(join(work, stem, 'etcd')));
      expect(got[0]!.origin).toBe(`${base}/good/etcd/v3.6.8/${stem}.tar.gz`);
      expect(execFileSync(got[3]!.path, ['version'], { encoding: 'utf8' }).trim()).toBe(
        'v1.36.3+k0s.2',
      );
      // Cached now: a second call downloads nothing even with the server gone from the URLs.
      const again = await ensureAll(['etcd', 'kubectl'], {
        source: 'fetch',
        urls: { etcd: 'http://127.0.0.1:9', kubernetes: 'http://127.0.0.1:9' },
      });
      expect(again.every((b) => !b.acquired)).toBe(true);
      expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
    });
  });

  it('rejects a bad checksum with a clear error and leaves nothing in the cache', async () => {
    await withCache(async (dir) => {
      const err = await ensureBinary('etcd', {
        source: 'fetch',
        urls: { etcd: `${base}/bad/etcd` },
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DownloadError);
      expect((err as DownloadError).kind).toBe('checksum');
      expect((err as Error).message).toBe(
        `sha256 mismatch for ${stem}.tar.gz: the release says ${'e'.repeat(64)}, the download is ${sha256(join(work, 'etcd.tgz'))}; refusing to use it (nothing was cached)`,
      );
      expect(existsSync(join(dir, 'bin'))).toBe(false);
      expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
      // auto mode does not paper over a bad checksum with a build
      await expect(ensureBinary('etcd', { urls: { etcd: `${base}/bad/etcd` } })).rejects.toThrow(
        /sha256 mismatch/,
      );

      // Through the CLI: exit 1, one error line, nothing cached.
      const r = await hardwireAsync(['components', 'fetch', 'etcd'], {
        HARDWIRE_CACHE: dir,
        HARDWIRE_ETCD_RELEASE_URL: `${base}/bad/etcd`,
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /^error: fetch etcd v3\.6\.8: sha256 mismatch for etcd-v3\.6\.8-linux-.*\.tar\.gz/m,
      );
      expect(existsSync(join(dir, 'bin'))).toBe(false);
    });
  });

  it('rejects a release binary that reports another version', async () => {
    await withCache(async (dir) => {
      await expect(
        ensureBinary('kube-scheduler', {
          source: 'fetch',
          urls: { kubernetes: `${base}/good/k8s` },
        }),
      ).rejects.toThrow(/does not report v1\.36\.3: expected a line "Kubernetes v1\.36\.3"/);
      expect(existsSync(join(dir, 'bin', 'kube-scheduler'))).toBe(false);
    });
  });

  it('reports a missing release file as an HTTP error', async () => {
    await withCache(async () => {
      const err = await ensureBinary('kube-apiserver', {
        source: 'fetch',
        urls: { kubernetes: `${base}/good/k8s` },
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DownloadError);
      expect((err as DownloadError).kind).toBe('http');
      expect((err as Error).message).toMatch(/kube-apiserver\.sha256 answered 404/);
    });
  });
});

describe('local directory source', () => {
  it('uses binaries from --from DIR after checking their version, and refuses wrong ones', async () => {
    await withCache(async (dir) => {
      const from = tempDir('hardwire-from-');
      script(join(from, 'etcd'), ['etcd Version: 3.6.8']);
      const got = await ensureBinary('etcd', { from });
      expect(got).toMatchObject({
        name: 'etcd',
        version: 'v3.6.8',
        source: 'local',
        origin: join(from, 'etcd'),
        acquired: true,
      });
      expect(got.sha256).toBe(sha256(join(from, 'etcd')));
      expect((await ensureBinary('etcd', { from })).acquired).toBe(false);

      script(join(from, 'etcd'), ['etcd Version: 3.5.0']);
      await expect(ensureBinary('etcd', { from })).rejects.toThrow(StepError);
      await expect(ensureBinary('etcdctl', { from })).rejects.toThrow(
        /etcdctl is missing or not executable/,
      );

      // The inventory's components.from, relative to the inventory file.
      script(join(from, 'etcd'), ['etcd Version: 3.6.8']);
      const inv = join(from, 'inv.yaml');
      writeFileSync(
        inv,
        'apiVersion: hardwire/v1\nkind: Inventory\ncluster:\n  name: demo\nhosts:\n  - name: cp-0\n    address: 198.51.100.10\ncomponents:\n  from: .\n',
      );
      const r = hardwire(['components', 'fetch', 'etcd', '--inventory', inv, '--json'], {
        env: { HARDWIRE_CACHE: dir },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).binaries[0]).toMatchObject({
        name: 'etcd',
        source: 'local',
        origin: join(from, 'etcd'),
      });
      rmSync(from, { recursive: true, force: true });
    });
  });

  it('gives one-line input errors for unknown names and versions', () => {
    // kubelet is a name now (`components build workers`); a name no catalog has is still refused.
    const r = hardwire(['components', 'build', 'kube-flannel']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: names: unknown component "kube-flannel"/);
    const v = hardwire(['components', 'build', 'etcd', '--kubernetes-version', 'v1.35.0']);
    expect(v.code).toBe(2);
    expect(v.stderr).toMatch(/kubernetesVersion: v1\.35\.0 has no etcd\/k0s pairing/);
  });
});
