// What a prove test checks of a hit without trusting prove: the cited line, re-opened in the Go
// module cache, lies in the function delve reported and spells the flag's selector.
import { PINNED_KUBERNETES } from '../../lib/constants.ts';
import { debugBuildReplaces } from '../../harness/delve/modules.ts';
import type { FlagMap } from '../../core/flags/map.ts';
import type { SiteResult } from '../../harness/prove/classify.ts';
import { enclosingFunc, sameFunction, sourceLines } from '../../harness/prove/source.ts';

/**
 * Delve's file as the module cache holds it: the debug builds name a replaced staging module by its
 * required v0.0.0 (k8s.io/kube-aggregator); the wrapper module's replace lines give the version.
 */
const REPLACED = debugBuildReplaces(PINNED_KUBERNETES);
function cacheFile(file: string): string {
  const m = /^(.+?)@(v[^/]+)\/(.+)$/.exec(file);
  const v = m ? REPLACED.get(m[1]!) : undefined;
  return m && v ? `${m[1]}@${v}/${m[3]}` : file;
}

/** What the test checks of a hit without trusting prove: the cited line, read back from the module cache. */
export function independentProblem(s: SiteResult, selector: string): string | undefined {
  const m = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(s.ref);
  if (!m) return `unparsable ref ${s.ref}`;
  const [, module, version, file, lineText] = m;
  const line = Number(lineText);
  if (!cacheFile(s.at!.file).endsWith(`${module}@${version}/${file}`) || s.at!.line !== line)
    return `delve stopped at ${s.at!.file}:${s.at!.line}, not ${s.ref}`;
  const lines = sourceLines(module!, version!, file!);
  if (!lines) return `${s.ref} is not in the module cache`;
  const fn = enclosingFunc(lines, line);
  if (!sameFunction(fn, s.at!.function))
    return `${s.ref} lies in ${fn ?? 'no function'}, delve reported ${s.at!.function}`;
  const word = selector.replace(/^\./, '');
  if (!lines[line - 1]!.includes(word))
    return `${s.ref} does not spell ${word}: ${lines[line - 1]!.trim()}`;
  return undefined;
}

export function selectorOf(map: FlagMap, flag: string, ref: string): string {
  return map.flags
    .find((f) => f.name === flag)!
    .consumedAt.find((c) => `${c.module}@${c.version}/${c.file}:${c.line}` === ref)!.selector;
}
