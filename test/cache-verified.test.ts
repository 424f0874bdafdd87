// The binary cache's verification record: install writes it with the binary, so a listing (which
// re-hashes every entry) rewrites no record after a rebuild. CI at 4e78420 found a listing that
// rewrote the record a rebuild had left stale, while another lane could be reading it.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryDir, install, listEntries } from '../core/components/binaries/cache.ts';
import { tempDir } from './helpers/tmp.ts';

const stamp = (f: string) => {
  const st = statSync(f);
  return `${st.ino} ${st.mtimeMs}`;
};

describe('cache verification records', () => {
  let saved: string | undefined;
  beforeAll(() => {
    saved = process.env.HARDWIRE_CACHE;
    process.env.HARDWIRE_CACHE = tempDir('hardwire-cache-verified-');
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.HARDWIRE_CACHE;
    else process.env.HARDWIRE_CACHE = saved;
  });

  it('a rebuilt entry is recorded by install, and a listing after it rewrites nothing', async () => {
    const meta = {
      name: 'kubectl',
      version: 'v1.36.3',
      source: 'build',
      origin: 't',
      versionOutput: 'x',
    } as const;
    await install('/bin/true', meta);
    await listEntries();
    // The rebuild: another binary under the same name and version.
    const m = await install('/bin/false', meta);
    const record = join(entryDir('kubectl', 'v1.36.3'), 'verified.json');
    const before = stamp(record);
    const [e] = await listEntries();
    expect(e).toMatchObject({ state: 'ok', name: 'kubectl', manifest: { sha256: m.sha256 } });
    expect(stamp(record)).toBe(before);
  });
});
