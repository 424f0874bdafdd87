// Which version of a module the debug build really compiled. kube-apiserver's go.mod requires some
// staging modules at v0.0.0 (k8s.io/kube-aggregator), and hardwire's wrapper module replaces them
// with the tag's v0.36.3; -trimpath names their files by the required v0.0.0, which is in no module
// cache. The replace lines (`M => M vX`) say where the source is; the require lines say the name
// the binary gives it. trace reads a stack (binary name → cache), prove sets a tracepoint (cache →
// binary name): both from here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { moduleDirOf } from '../../core/components/binaries/build.ts';

export function parseReplaces(goMod: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [, from, to, version] of goMod.matchAll(
    /^\s*(?:replace\s+)?(\S+)\s+=>\s+(\S+)\s+(v\S+)\s*$/gm,
  )) {
    if (from === to) out.set(from!, version!);
  }
  return out;
}

/** The required version of each module (`M vX` in a require block or line; `// indirect` allowed). */
function parseRequires(goMod: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [, mod, version] of goMod.matchAll(
    /^\s*(?:require\s+)?([\w.-]+\.[\w.-]+\/\S+)\s+(v[^\s=]+)\s*(?:\/\/.*)?$/gm,
  ))
    out.set(mod!, version!);
  return out;
}

/** Modules the binary names at another version than the cache holds: module → { cache, binary }. */
export function binaryVersions(goMod: string): BinaryVersions {
  const required = parseRequires(goMod);
  const out: BinaryVersions = new Map();
  for (const [mod, cache] of parseReplaces(goMod)) {
    const binary = required.get(mod);
    if (binary && binary !== cache) out.set(mod, { cache, binary });
  }
  return out;
}

const debugGoMod = (kubernetesVersion: string) =>
  readFileSync(join(moduleDirOf('kubernetes', kubernetesVersion), 'go.mod'), 'utf8');

/** The replaces of the module the Kubernetes debug builds come from, at this Kubernetes version. */
export function debugBuildReplaces(kubernetesVersion: string): Map<string, string> {
  return parseReplaces(debugGoMod(kubernetesVersion));
}

/** The same module's renames, in the direction a tracepoint needs them. */
export function debugBuildBinaryVersions(kubernetesVersion: string): BinaryVersions {
  return binaryVersions(debugGoMod(kubernetesVersion));
}

export type BinaryVersions = Map<string, { cache: string; binary: string }>;

/** `module@version/file` as the debug build's DWARF names it. */
export function namer(binary: BinaryVersions) {
  return (module: string, version: string, file: string) => {
    const b = binary.get(module);
    return `${module}@${b && b.cache === version ? b.binary : version}/${file}`;
  };
}

/** A file as delve names it (`module@v0.0.0/path` for a replaced module) at the version the build compiled. */
export function compiledFile(file: string, replaced: Map<string, string>): string {
  const m = /^(.+?)@(v[^/]+)\/(.+)$/.exec(file);
  const v = m && replaced.get(m[1]!);
  return m && v ? `${m[1]}@${v}/${m[3]}` : file;
}
