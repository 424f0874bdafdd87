// The API kinds a release removes, as committed beside its flag maps (derived from k8s.io/api by
// harness/flags/api-lifecycle.ts when the maps are regenerated). Reading it needs no Go.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDir } from './map.ts';
import type { ApiLifecycle } from '../upgrade/stored-apis.ts';

export function loadApiLifecycle(kubernetes: string): ApiLifecycle | null {
  const file = join(dataDir(kubernetes), 'api-lifecycle.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as ApiLifecycle) : null;
}
