// Full PKI for a 3-host cluster vs the floor: the same number of native RSA-2048 key generations,
// at the same concurrency, measured side by side in one run (median of N).
import { generateKeyPair } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadValidInventory } from '../core/validate/inventory.ts';
import { ensurePki } from '../core/pki/store.ts';
import { allLeaves, CAS } from '../core/pki/table.ts';

const gen = promisify(generateKeyPair);
const runs = Number(process.argv[2] ?? 7);
const inv = loadValidInventory(join(import.meta.dirname, '..', 'hosts', 'example.yaml'));
const keys = CAS.length + allLeaves(inv).length + 1; // + sa.key

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const keygen = () =>
  gen('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });

const pki: number[] = [];
const floorPar: number[] = [];
const floorSeq: number[] = [];
for (let i = 0; i < runs; i++) {
  const dir = mkdtempSync(join(tmpdir(), 'hardwire-bench-'));
  pki.push(await time(() => ensurePki(dir, inv)));
  rmSync(dir, { recursive: true });
  floorPar.push(await time(() => Promise.all(Array.from({ length: keys }, keygen))));
  floorSeq.push(
    await time(async () => {
      for (let k = 0; k < keys; k++) await keygen();
    }),
  );
}
const p = median(pki);
const f = median(floorPar);
const s = median(floorSeq);
console.log(
  `hardwire pki, 3-host cluster (${keys} RSA-2048 keys, ${allLeaves(inv).length + CAS.length} certs of which 4 sit in kubeconfigs), median of ${runs}:`,
);
console.log(`  hardwire pki                     ${p.toFixed(0).padStart(6)} ms`);
console.log(
  `  floor: ${keys} native keygens, parallel ${f.toFixed(0).padStart(6)} ms   ratio ${(p / f).toFixed(2)}x`,
);
console.log(
  `  ${keys} native keygens, sequential     ${s.toFixed(0).padStart(6)} ms   ratio ${(p / s).toFixed(2)}x`,
);
