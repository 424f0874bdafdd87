// Tools built from a pinned source archive (kube-bench): how the archive is found and checked, and
// the release download with the cfg/ that ships beside the binary, against a loopback server. The
// real build from the real archive runs in test/helpers/cis-suite.ts (test/w1w.test.ts) (`hardwire cis` builds it on first use).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { serveFiles } from './helpers/file-server.ts';
import { join } from 'node:path';
import { InputError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { ensureAll } from '../core/components/binaries/index.ts';
import { goArch } from '../core/components/binaries/catalog.ts';
import { DownloadError } from '../core/components/binaries/fetch.ts';
import { assetDir } from '../core/components/binaries/assets.ts';
import {
  makeVariables,
  resolveSource,
  sharedSourcesDir,
  SOURCE_RECIPES,
  treeDigest,
} from '../core/components/binaries/sources.ts';
import { cacheDir } from '../lib/paths.ts';
import { hardwire } from './helpers/cli.ts';
import { tempDir } from './helpers/tmp.ts';
import { requireInputs, skipWithoutInputs } from './helpers/inputs.ts';

const pin = SOURCE_RECIPES['kube-bench']!.pins['v0.15.6']!;
const shared = join(sharedSourcesDir(), pin.file);

function recorder(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => lines.push(m),
    warn: (m) => lines.push(`warning: ${m}`),
    step: (m) => lines.push(`==> ${m}`),
  };
}

async function withEnv<T>(
  env: Record<string, string | undefined>,
  fn: () => Promise<T>,
): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(env))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
}

describe('kube-bench source archive', () => {
  const work = tempDir('hardwire-sources-');
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it.skipIf(skipWithoutInputs(shared))(
    'finds the pinned archive beside the repo and checks its sha256',
    async () => {
      requireInputs(shared);
      const src = await withEnv({ HARDWIRE_KUBE_BENCH_SOURCE: undefined }, () =>
        resolveSource('kube-bench', 'v0.15.6', undefined, recorder()),
      );
      expect(src).toMatchObject({
        kind: 'archive',
        path: shared,
        digest: pin.sha256,
        via: 'the shared sources directory',
      });
    },
  );

  it('refuses an archive that is not the pinned one, naming the field and the fix', async () => {
    const fake = join(work, pin.file);
    writeFileSync(fake, 'not kube-bench');
    const err = await resolveSource('kube-bench', 'v0.15.6', fake, recorder()).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).message).toMatch(
      /^--source: .* has sha256 [0-9a-f]{64}, not the pinned kube-bench-v0\.15\.6\.tar\.gz \(397dc42f/,
    );
    const viaEnv = await withEnv({ HARDWIRE_KUBE_BENCH_SOURCE: fake }, () =>
      resolveSource('kube-bench', 'v0.15.6', undefined, recorder()).catch((e: unknown) => e),
    );
    expect((viaEnv as Error).message).toMatch(/^HARDWIRE_KUBE_BENCH_SOURCE: /);
  });

  it('refuses a directory that is not a kube-bench tree, and a path that does not exist', async () => {
    mkdirSync(join(work, 'other'));
    writeFileSync(join(work, 'other', 'go.mod'), 'module example.com/other\n');
    await expect(
      resolveSource('kube-bench', 'v0.15.6', join(work, 'other'), recorder()),
    ).rejects.toThrow(
      /^--source: .* is not a github\.com\/aquasecurity\/kube-bench tree \(its go\.mod declares example\.com\/other\)/,
    );
    await expect(
      resolveSource('kube-bench', 'v0.15.6', join(work, 'missing'), recorder()),
    ).rejects.toThrow(/^--source: .*missing does not exist/);
  });

  it.skipIf(skipWithoutInputs(shared))(
    'takes an unpacked tree as given: the pinned tree quietly, an edited one with a warning',
    async () => {
      requireInputs(shared);
      execFileSync('tar', ['-xzf', shared, '-C', work]);
      const tree = join(work, pin.file.replace(/\.tar\.gz$/, ''));
      const log = recorder();
      expect(await resolveSource('kube-bench', 'v0.15.6', tree, log)).toMatchObject({
        kind: 'dir',
        digest: pin.treeDigest,
      });
      expect(log.lines).toEqual([]);
      appendFileSync(join(tree, 'README.md'), '\nedited\n');
      const edited = await resolveSource('kube-bench', 'v0.15.6', tree, log);
      expect(edited!.digest).not.toBe(pin.treeDigest);
      expect(edited!.digest).toBe(await treeDigest(tree));
      expect(log.lines.join('\n')).toMatch(
        /warning: .* is not the pinned kube-bench v0\.15\.6 tree/,
      );
    },
  );

  it('refuses --source in one line, exit 2, where it cannot apply or is wrong', () => {
    for (const [args, re] of [
      [
        ['etcd', '--source', '/tmp'],
        /^error: --source: only applies to binaries built from a source archive \(k0s, kube-bench\)/,
      ],
      [
        ['kube-bench', '--source', '/nonexistent/kb.tar.gz'],
        /^error: --source: \/nonexistent\/kb\.tar\.gz does not exist/,
      ],
      [
        ['k0s', 'kube-bench', '--source', '/tmp'],
        /^error: --source: is one tool's source, and k0s and kube-bench are named; build them one at a time/,
      ],
      [
        ['k0s', '--source', '/tmp'],
        /^error: --source: \/tmp is not a github\.com\/k0sproject\/k0s tree/,
      ],
    ] as const) {
      const r = hardwire(['components', 'build', ...args]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(re);
    }
  });
});

describe('k0s source archive', () => {
  const work = tempDir('hardwire-k0s-sources-');
  const k0sPin = SOURCE_RECIPES.k0s!.pins['v1.36.3+k0s.2']!;
  const k0sShared = join(sharedSourcesDir(), k0sPin.file);

  it.skipIf(skipWithoutInputs(k0sShared))(
    'finds the pinned k0s archive beside the repo and checks its sha256',
    async () => {
      requireInputs(k0sShared);
      const src = await withEnv({ HARDWIRE_K0S_SOURCE: undefined }, () =>
        resolveSource('k0s', 'v1.36.3+k0s.2', undefined, recorder()),
      );
      expect(src).toMatchObject({
        kind: 'archive',
        path: k0sShared,
        digest: k0sPin.sha256,
        via: 'the shared sources directory',
      });
    },
  );

  it('refuses a k0s archive that is not the pinned one, through --source and $HARDWIRE_K0S_SOURCE', async () => {
    const fake = join(work, 'k0s.tar.gz');
    writeFileSync(fake, 'not k0s');
    await expect(resolveSource('k0s', 'v1.36.3+k0s.2', fake, recorder())).rejects.toThrow(
      /^--source: .* not the pinned k0s-v1\.36\.3\+k0s\.2\.tar\.gz \(e4f6efb3/,
    );
    const viaEnv = await withEnv({ HARDWIRE_K0S_SOURCE: fake }, () =>
      resolveSource('k0s', 'v1.36.3+k0s.2', undefined, recorder()).catch((e: unknown) => e),
    );
    expect((viaEnv as InputError).field).toBe('HARDWIRE_K0S_SOURCE');
  });

  // The build's -X list comes from the tree's Makefile variables, and k0s reports what it was built with.
  const built = join(cacheDir(), 'bin', 'k0s', 'v1.36.3+k0s.2', 'k0s');
  const tree = join(cacheDir(), 'gosrc', 'k0s-v1.36.3+k0s.2');
  // scripts/run test builds k0s before the tests (scripts/setup.sh), so in CI both are there.
  it.skipIf(skipWithoutInputs(built, tree))(
    "the cached k0s reports the component versions of its tree's Makefile.variables",
    () => {
      requireInputs(built, tree);
      const vars = makeVariables(join(tree, 'embedded-bins', 'Makefile.variables'));
      // "k0s : v1.36.3+k0s.2", "etcd : 3.6.14", ... one per line.
      const all = Object.fromEntries(
        execFileSync(built, ['version', '--all'], { encoding: 'utf8' })
          .trim()
          .split('\n')
          .map((l) => l.split(' : ').map((x) => x.trim())),
      );
      expect(all).toMatchObject({
        k0s: 'v1.36.3+k0s.2',
        etcd: vars.etcd_version,
        konnectivity: vars.konnectivity_version,
        kubernetes: vars.kubernetes_version,
        kine: vars.kine_version,
        runc: vars.runc_version,
      });
      expect(vars.etcd_version).toBe('3.6.14');
    },
  );
});

describe('kube-bench release download over loopback', () => {
  let closeServer: () => Promise<void>;
  let base: string;
  const files = new Map<string, Buffer>();
  const work = tempDir('hardwire-kb-release-');
  const asset = `kube-bench_0.15.6_linux_${goArch()}.tar.gz`;

  beforeAll(async () => {
    // Laid out as the project's .goreleaser.yml archives it: the binary and cfg/ at the top.
    const rel = join(work, 'rel');
    mkdirSync(join(rel, 'cfg', 'cis-1.12'), { recursive: true });
    writeFileSync(join(rel, 'kube-bench'), '#!/bin/sh\necho 0.15.6\n');
    chmodSync(join(rel, 'kube-bench'), 0o755);
    writeFileSync(join(rel, 'cfg', 'config.yaml'), '---\n');
    writeFileSync(join(rel, 'cfg', 'cis-1.12', 'master.yaml'), 'controls:\n');
    execFileSync('tar', ['-czf', join(work, asset), '-C', rel, 'kube-bench', 'cfg']);
    const tgz = readFileSync(join(work, asset));
    files.set(`/good/v0.15.6/${asset}`, tgz);
    files.set(
      '/good/v0.15.6/kube-bench_0.15.6_checksums.txt',
      Buffer.from(`${createHash('sha256').update(tgz).digest('hex')}  ${asset}\n`),
    );
    files.set(`/bad/v0.15.6/${asset}`, tgz);
    files.set(
      '/bad/v0.15.6/kube-bench_0.15.6_checksums.txt',
      Buffer.from(`${'e'.repeat(64)}  ${asset}\n`),
    );
    ({ base, close: closeServer } = await serveFiles(files));
  });
  afterAll(async () => {
    await closeServer();
    rmSync(work, { recursive: true, force: true });
  });

  it('downloads and verifies the release, caches cfg/ beside the binary, and fetches again when cfg/ changed', async () => {
    const cache = tempDir('hardwire-cache-');
    await withEnv({ HARDWIRE_CACHE: cache }, async () => {
      const urls = { 'kube-bench': `${base}/good` };
      const [b] = await ensureAll(['kube-bench'], { source: 'fetch', urls });
      expect(b).toMatchObject({
        name: 'kube-bench',
        version: 'v0.15.6',
        source: 'fetch',
        acquired: true,
        origin: `${base}/good/v0.15.6/${asset}`,
      });
      const cfg = assetDir('kube-bench', 'v0.15.6', 'cfg');
      expect(readFileSync(join(cfg, 'cis-1.12', 'master.yaml'), 'utf8')).toBe('controls:\n');
      expect((await ensureAll(['kube-bench'], { source: 'fetch', urls }))[0]!.acquired).toBe(false);
      // An edited benchmark is never handed out: the entry is acquired again.
      appendFileSync(join(cfg, 'config.yaml'), 'edited: true\n');
      const log = recorder();
      const [again] = await ensureAll(['kube-bench'], { source: 'fetch', urls, log });
      expect(again!.acquired).toBe(true);
      expect(log.lines.join('\n')).toMatch(
        /cached kube-bench v0\.15\.6 cannot be used: its cfg\/ directory changed since it was cached/,
      );
      expect(readFileSync(join(cfg, 'config.yaml'), 'utf8')).toBe('---\n');
    });
    rmSync(cache, { recursive: true, force: true });
  });

  it("refuses a download whose sha256 is not the release's and caches nothing", async () => {
    const cache = tempDir('hardwire-cache-');
    await withEnv({ HARDWIRE_CACHE: cache }, async () => {
      const err = await ensureAll(['kube-bench'], {
        source: 'fetch',
        urls: { 'kube-bench': `${base}/bad` },
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DownloadError);
      expect((err as DownloadError).kind).toBe('checksum');
      expect(existsSync(join(cache, 'bin'))).toBe(false);
    });
    rmSync(cache, { recursive: true, force: true });
  });

  it('takes kube-bench and its cfg/ from --from DIR', async () => {
    const cache = tempDir('hardwire-cache-');
    const dir = join(work, 'from');
    mkdirSync(join(dir, 'cfg'), { recursive: true });
    copyFileSync(join(work, 'rel', 'kube-bench'), join(dir, 'kube-bench'));
    chmodSync(join(dir, 'kube-bench'), 0o755);
    writeFileSync(join(dir, 'cfg', 'config.yaml'), '--- # from\n');
    await withEnv({ HARDWIRE_CACHE: cache }, async () => {
      const [b] = await ensureAll(['kube-bench'], { from: dir });
      expect(b!.source).toBe('local');
      expect(
        readFileSync(join(assetDir('kube-bench', 'v0.15.6', 'cfg'), 'config.yaml'), 'utf8'),
      ).toBe('--- # from\n');
    });
    rmSync(cache, { recursive: true, force: true });
  });
});
