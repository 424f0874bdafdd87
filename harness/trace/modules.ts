// Which version of a module the debug build really compiled. kube-apiserver's go.mod requires some
// staging modules at v0.0.0 (k8s.io/kube-aggregator), and hardwire's wrapper module replaces them
// with the tag's v0.36.3; -trimpath names their files by the required v0.0.0, which is in no module
// cache. The replace lines (`M => M vX`) say where the source is.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { moduleDirOf } from '../../core/components/binaries/build.ts';

export function parseReplaces(goMod: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [, from, to, version] of goMod.matchAll(/^\s*(?:replace\s+)?(\S+)\s+=>\s+(\S+)\s+(v\S+)\s*$/gm)) {
    if (from === to) out.set(from!, version!);
  }
  return out;
}

/** The replaces of the module the Kubernetes debug builds come from, at this Kubernetes version. */
export function debugBuildReplaces(kubernetesVersion: string): Map<string, string> {
  return parseReplaces(readFileSync(join(moduleDirOf('kubernetes', kubernetesVersion), 'go.mod'), 'utf8'));
}
