// Writes core/validate/cis-checks.json from kube-bench's own benchmark files, read from its pinned
// source archive (../shared/sources, core/components/binaries/sources.ts): `node scripts/cis-checks.ts`.
// test/weakening.test.ts runs cisTableText and compares it with the committed file byte for byte.
import { createReadStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { PINNED_KUBERNETES } from '../lib/constants.ts';
import { VERSION_TABLE } from '../core/components/binaries/catalog.ts';
import { sharedSourcesDir, sourceRecipe } from '../core/components/binaries/sources.ts';
import {
  CIS_BENCHMARK,
  CIS_FILES,
  CIS_TABLE_FILE,
  cisChecksFrom,
} from '../core/validate/cis-checks.ts';

/** The kube-bench archive of the pinned Kubernetes version's row. */
export function kubeBenchArchive(): { path: string; version: string; sha256: string } {
  const version = VERSION_TABLE.find((r) => r.kubernetes === PINNED_KUBERNETES)!['kube-bench'];
  const pin = sourceRecipe('kube-bench')!.pins[version]!;
  return { path: join(sharedSourcesDir(), pin.file), version, sha256: pin.sha256 };
}

/** The benchmark's files, by name, out of the archive. */
async function benchmarkFiles(archive: string, version: string): Promise<Record<string, string>> {
  const prefix = `kube-bench-${version}/cfg/${CIS_BENCHMARK}/`;
  const files: Record<string, string> = {};
  const ex = extract();
  ex.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c) => chunks.push(c as Buffer));
    stream.on('end', () => {
      const name = header.name.startsWith(prefix) ? header.name.slice(prefix.length) : '';
      if ((CIS_FILES as readonly string[]).includes(name))
        files[name] = Buffer.concat(chunks).toString('utf8');
      next();
    });
    stream.resume();
  });
  await new Promise<void>((resolve, reject) => {
    ex.on('finish', resolve);
    ex.on('error', reject);
    createReadStream(archive).on('error', reject).pipe(createGunzip()).on('error', reject).pipe(ex);
  });
  const missing = CIS_FILES.filter((f) => !(f in files));
  if (missing.length) throw new Error(`${archive} has no ${prefix}${missing.join(', ')}`);
  return files;
}

export async function cisTableText(): Promise<string> {
  const a = kubeBenchArchive();
  const files = await benchmarkFiles(a.path, a.version);
  const table = {
    generatedBy: 'scripts/cis-checks.ts',
    from: `kube-bench ${a.version} cfg/${CIS_BENCHMARK}/{${CIS_FILES.join(',')}} (kube-bench-${a.version}.tar.gz, sha256 ${a.sha256})`,
    checks: cisChecksFrom(files),
  };
  return `${JSON.stringify(table, null, 2)}\n`;
}

if (import.meta.main) {
  writeFileSync(CIS_TABLE_FILE, await cisTableText());
  console.log(`wrote ${CIS_TABLE_FILE}`);
}
