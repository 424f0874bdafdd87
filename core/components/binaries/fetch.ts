// Downloads official release binaries and verifies them against the release's sha256 file
// before anything reaches the cache. Base URLs can be overridden (env or option), which is how
// the tests point them at a loopback server.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StepError } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/log.ts';
import { goArch, groupOf, type VersionSet } from './catalog.ts';
import type { Arch } from '../../../lib/arch.ts';
import { type BinaryName } from '../registry/index.ts';
import { run } from '../../../lib/proc.ts';

export interface ReleaseUrls {
  /** Kubernetes release server: <base>/<version>/bin/linux/<arch>/<name> and <name>.sha256 */
  kubernetes: string;
  /** etcd GitHub releases: <base>/<version>/etcd-<version>-linux-<arch>.tar.gz and SHA256SUMS */
  etcd: string;
  /** k0s GitHub releases: <base>/<tag>/k0s-<tag>-<arch> and sha256sums.txt */
  k0s: string;
  /** kube-bench GitHub releases: <base>/<tag>/kube-bench_<ver>_linux_<arch>.tar.gz and kube-bench_<ver>_checksums.txt */
  'kube-bench': string;
  /** The etcd k0s pins: etcd's own releases, as for etcd. */
  'k0s-etcd': string;
  /** konnectivity publishes container images only; hardwire builds it from its Go module. */
  konnectivity: string;
}

export const DEFAULT_URLS: ReleaseUrls = {
  kubernetes: 'https://dl.k8s.io/release',
  etcd: 'https://github.com/etcd-io/etcd/releases/download',
  k0s: 'https://github.com/k0sproject/k0s/releases/download',
  'kube-bench': 'https://github.com/aquasecurity/kube-bench/releases/download',
  'k0s-etcd': 'https://github.com/etcd-io/etcd/releases/download',
  konnectivity: '',
};

export const URL_ENV: Record<keyof ReleaseUrls, string> = {
  kubernetes: 'HARDWIRE_KUBERNETES_RELEASE_URL',
  etcd: 'HARDWIRE_ETCD_RELEASE_URL',
  k0s: 'HARDWIRE_K0S_RELEASE_URL',
  'kube-bench': 'HARDWIRE_KUBE_BENCH_RELEASE_URL',
  'k0s-etcd': 'HARDWIRE_ETCD_RELEASE_URL',
  konnectivity: 'HARDWIRE_KONNECTIVITY_RELEASE_URL',
};

export function releaseUrls(override: Partial<ReleaseUrls> = {}): ReleaseUrls {
  const pick = (g: keyof ReleaseUrls) =>
    (override[g] ?? process.env[URL_ENV[g]] ?? DEFAULT_URLS[g]).replace(/\/+$/, '');
  return {
    kubernetes: pick('kubernetes'),
    etcd: pick('etcd'),
    k0s: pick('k0s'),
    'kube-bench': pick('kube-bench'),
    'k0s-etcd': pick('k0s-etcd'),
    konnectivity: pick('konnectivity'),
  };
}

/** A download that failed. kind "network" means the server could not be reached at all. */
export class DownloadError extends StepError {
  readonly kind: 'network' | 'http' | 'checksum';
  constructor(
    step: string,
    message: string,
    kind: 'network' | 'http' | 'checksum',
    opts: { detail?: string[]; cause?: unknown } = {},
  ) {
    super(step, message, opts);
    this.kind = kind;
  }
}

const TIMEOUT_MS = Number(process.env.HARDWIRE_DOWNLOAD_TIMEOUT_MS ?? 30 * 60_000);

async function get(url: string, step: string): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, { redirect: 'follow', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new DownloadError(
      step,
      `cannot reach ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`,
      'network',
      { cause: err },
    );
  }
  if (!res.ok || !res.body)
    throw new DownloadError(step, `GET ${url} answered ${res.status} ${res.statusText}`, 'http');
  return res;
}

/** Streams url to dest and returns the sha256 of what was written. */
export async function download(url: string, dest: string, step: string): Promise<string> {
  const res = await get(url, step);
  const h = createHash('sha256');
  const hasher = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      h.update(chunk);
      cb(null, chunk);
    },
  });
  try {
    await pipeline(
      Readable.fromWeb(res.body as import('node:stream/web').ReadableStream),
      hasher,
      createWriteStream(dest, { mode: 0o600 }),
    );
  } catch (err) {
    throw new DownloadError(
      step,
      `download of ${url} broke off: ${(err as Error).message}`,
      'network',
      { cause: err },
    );
  }
  return h.digest('hex');
}

/**
 * Reads a checksum file: either a bare hex digest (Kubernetes' <file>.sha256) or
 * "<hex>  <name>" / "<hex> *<name>" lines (sha256sum output, as etcd and k0s publish).
 */
export function checksumFor(text: string, fileName: string): string | undefined {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  if (lines.length === 1 && /^[0-9a-fA-F]{64}$/.test(lines[0]!)) return lines[0]!.toLowerCase();
  for (const l of lines) {
    const m = /^([0-9a-fA-F]{64})\s+[* ]?(.+)$/.exec(l);
    if (m && (m[2] === fileName || m[2]!.endsWith(`/${fileName}`))) return m[1]!.toLowerCase();
  }
  return undefined;
}

async function expectedSha(url: string, fileName: string, step: string): Promise<string> {
  const text = await (await get(url, step)).text();
  const sha = checksumFor(text, fileName);
  if (!sha) throw new DownloadError(step, `${url} lists no sha256 for ${fileName}`, 'checksum');
  return sha;
}

function verify(step: string, fileName: string, expected: string, actual: string): void {
  if (expected !== actual) {
    throw new DownloadError(
      step,
      `sha256 mismatch for ${fileName}: the release says ${expected}, the download is ${actual}; refusing to use it (nothing was cached)`,
      'checksum',
    );
  }
}

export interface Fetched {
  files: Map<BinaryName, string>;
  origin: Map<BinaryName, string>;
  /** The directory holding the group's asset directories (kube-bench's cfg/), when it has any. */
  assetRoot?: string;
}

/** Downloads and verifies the given binaries of one group into outDir. Nothing touches the cache. */
export async function fetchGroup(
  names: BinaryName[],
  versions: VersionSet,
  outDir: string,
  log: Logger,
  override: Partial<ReleaseUrls> = {},
  forArch?: Arch,
): Promise<Fetched> {
  const group = groupOf(names[0]!);
  const urls = releaseUrls(override);
  const arch = forArch ?? goArch();
  const files = new Map<BinaryName, string>();
  const origin = new Map<BinaryName, string>();

  if (group === 'kubernetes') {
    for (const name of names) {
      const step = `fetch ${name} ${versions.kubernetes}`;
      const url = `${urls.kubernetes}/${versions.kubernetes}/bin/linux/${arch}/${name}`;
      log.step(`download ${url}`);
      const want = await expectedSha(`${url}.sha256`, name, step);
      const dest = join(outDir, name);
      verify(step, name, want, await download(url, dest, step));
      await chmod(dest, 0o755);
      files.set(name, dest);
      origin.set(name, url);
    }
    return { files, origin };
  }

  if (group === 'etcd' || group === 'k0s-etcd') {
    const v = versions[group];
    const step = `fetch etcd ${v}`;
    const stem = `etcd-${v}-linux-${arch}`;
    const url = `${urls.etcd}/${v}/${stem}.tar.gz`;
    log.step(`download ${url}`);
    const want = await expectedSha(`${urls.etcd}/${v}/SHA256SUMS`, `${stem}.tar.gz`, step);
    const archive = join(outDir, `${stem}.tar.gz`);
    verify(step, `${stem}.tar.gz`, want, await download(url, archive, step));
    // k0s-etcd is the archive's etcd at k0s's version.
    const member = (n: BinaryName) => (n === 'k0s-etcd' ? 'etcd' : n);
    await run(
      'tar',
      [
        '-xzf',
        archive,
        '-C',
        outDir,
        '--no-same-owner',
        ...names.map((n) => `${stem}/${member(n)}`),
      ],
      { step },
    );
    for (const n of names) {
      files.set(n, join(outDir, stem, member(n)));
      origin.set(n, url);
    }
    return { files, origin };
  }

  if (group === 'konnectivity')
    throw new DownloadError(
      `fetch konnectivity-server ${versions.konnectivity}`,
      'konnectivity publishes container images, not release binaries; build it ("components build konnectivity-server")',
      'http',
    );
  if (group === 'kube-bench')
    return fetchKubeBench(versions['kube-bench'], urls['kube-bench'], arch, outDir, log);

  const tag = versions.k0s;
  const step = `fetch k0s ${tag}`;
  const asset = `k0s-${tag}-${arch}`;
  const dir = `${urls.k0s}/${encodeURIComponent(tag)}`;
  log.step(`download ${dir}/${encodeURIComponent(asset)}`);
  const want = await expectedSha(`${dir}/sha256sums.txt`, asset, step);
  const dest = join(outDir, 'k0s');
  verify(step, asset, want, await download(`${dir}/${encodeURIComponent(asset)}`, dest, step));
  await chmod(dest, 0o755);
  files.set('k0s', dest);
  origin.set('k0s', `${dir}/${encodeURIComponent(asset)}`);
  return { files, origin };
}

/** kube-bench's release archive holds the binary and cfg/ (its .goreleaser.yml); both are kept. */
async function fetchKubeBench(
  tag: string,
  base: string,
  arch: string,
  outDir: string,
  log: Logger,
): Promise<Fetched> {
  const ver = tag.replace(/^v/, '');
  const step = `fetch kube-bench ${tag}`;
  const asset = `kube-bench_${ver}_linux_${arch}.tar.gz`;
  const url = `${base}/${tag}/${asset}`;
  log.step(`download ${url}`);
  const want = await expectedSha(`${base}/${tag}/kube-bench_${ver}_checksums.txt`, asset, step);
  const archive = join(outDir, asset);
  verify(step, asset, want, await download(url, archive, step));
  const into = join(outDir, 'release');
  await mkdir(into);
  await run('tar', ['-xzf', archive, '-C', into, '--no-same-owner', 'kube-bench', 'cfg'], { step });
  return {
    files: new Map([['kube-bench', join(into, 'kube-bench')]]),
    origin: new Map([['kube-bench', url]]),
    assetRoot: into,
  };
}
