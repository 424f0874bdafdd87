// The stages of one request, derived from the goroutine stacks delve returned at each sink: every
// frame in a Go module (the handler-chain filters, go-restful, the handler, admission, the registry,
// storage, the etcd client), outermost first, in the order the sinks were hit. Between two hits
// only the frames below the stacks' common prefix are new. Nothing here lists the filters: a
// filter the chain runs is a stage because it is on the stack.
import type { SinkId } from './sinks.ts';
import { CHAIN_ADMIT, CHAIN_VALIDATE, ETCD_TXN, STORAGE_CREATE } from './sinks.ts';
import { compiledFile } from '../delve/modules.ts';

export interface Frame {
  function: string;
  file: string;
  line: number;
}
/** One goroutine's stack at a hit, outermost frame first. */
export interface GoroutineStack {
  goroutine: number;
  frames: Frame[];
}

export interface Hit {
  sink: SinkId;
  /** The function delve stopped in, and the goroutine it stopped. */
  function: string;
  goroutine: number;
  /** etcd3 store.Create's key argument, as delve read it. */
  key?: string;
  /** The goroutines that started this one, outermost first, then this one. */
  chain: GoroutineStack[];
  /** delve's replies verbatim: the stop, the ancestors, and each goroutine's stack. */
  raw: { stop: string; ancestors: string; stacks: { goroutine: number; reply: string }[] };
}

export interface Stage {
  n: number;
  function: string;
  /** module@version/path:line, as the module cache holds it. */
  ref: string;
  /**
   * When the build replaced the module (see modules.ts): the version delve named the file by, a
   * required v0.0.0 in no module cache. `ref` at this version is delve's file:line.
   */
  delveVersion?: string;
  url?: string;
  goroutine: number;
  /** The hit (index into the report's hits) whose stack showed it first. */
  hit: number;
  /** Which of the curriculum's nine stages this is, if one. */
  curriculum?: string;
}

/** The curriculum's list: URL → requestinfo.go → ... → an etcd Txn. */
export const CURRICULUM = [
  'URL',
  'requestinfo.go',
  'authentication.go',
  'authorization.go',
  'mutating admission',
  'schema validation',
  'validating admission',
  'storage.Create',
  'an etcd Txn',
] as const;

const MODULE_FILE = /^(.+?)@(v[^/]+)\/(.+)$/;

export function moduleFile(
  file: string,
): { module: string; version: string; path: string } | undefined {
  const m = MODULE_FILE.exec(file);
  return m ? { module: m[1]!, version: m[2]!, path: m[3]! } : undefined;
}

/** The file's line at its tag upstream (the flag map's form: staging modules under kubernetes/kubernetes). */
export function sourceUrl(
  module: string,
  version: string,
  path: string,
  line: number,
): string | undefined {
  const at = `${path}#L${line}`;
  const staging = /^v0\.(\d+\.\d+)$/.exec(version);
  if (module === 'k8s.io/kubernetes')
    return `https://github.com/kubernetes/kubernetes/blob/${version}/${at}`;
  if (module.startsWith('k8s.io/') && staging)
    return `https://github.com/kubernetes/kubernetes/blob/v1.${staging[1]}/staging/src/${module}/${at}`;
  if (module.startsWith('go.etcd.io/etcd/')) {
    const sub = module.slice('go.etcd.io/etcd/'.length);
    return `https://github.com/etcd-io/etcd/blob/${version}/${sub === 'client/v3' ? sub : sub.replace(/\/v3$/, '')}/${at}`;
  }
  // A pseudo-version names its commit; a tag names itself.
  const ref =
    /-([0-9a-f]{12})$/.exec(version)?.[1] ??
    (/^v\d+\.\d+\.\d+$/.test(version) ? version : undefined);
  const gh =
    /^github\.com\/([^/]+)\/([^/]+)(.*)$/.exec(module) ??
    /^golang\.org\/x\/()([^/]+)(.*)$/.exec(module);
  if (!gh || !ref) return undefined;
  const sub = gh[3]!
    .split('/')
    .filter((p) => p && !/^v\d+$/.test(p))
    .join('/');
  return `https://github.com/${gh[1] || 'golang'}/${gh[2]}/blob/${ref}/${sub ? `${sub}/` : ''}${at}`;
}

/**
 * The hits with each frame's file at the version the build compiled (a replaced module's, not the
 * v0.0.0 delve names it by), so that every path the report gives resolves in the module cache;
 * `raw` keeps delve's replies verbatim.
 */
export function atCompiledVersions(hits: Hit[], replaced: Map<string, string>): Hit[] {
  return hits.map((h) => ({
    ...h,
    chain: h.chain.map((c) => ({
      ...c,
      frames: c.frames.map((f) => ({ ...f, file: compiledFile(f.file, replaced) })),
    })),
  }));
}

/** The stop at etcd3 store.Create that wrote the object's key. */
export function storageCreateHit(
  hits: Hit[],
  name: string,
  namespace: string | undefined,
): Hit | undefined {
  const suffix = namespace ? `/${namespace}/${name}` : `/${name}`;
  return hits.find((h) => h.sink === 'storage-create' && h.key?.endsWith(suffix));
}

/** This request's hits: those of the goroutine whose storage create wrote the object's key. */
export function requestHits(hits: Hit[], name: string, namespace: string | undefined): Hit[] {
  const create = storageCreateHit(hits, name, namespace);
  return create ? hits.filter((h) => h.goroutine === create.goroutine) : [];
}

const same = (a: { g: number; f: Frame }, b: { g: number; f: Frame }) =>
  a.g === b.g && a.f.function === b.f.function && a.f.file === b.f.file && a.f.line === b.f.line;

export function deriveStages(hits: Hit[], replaced: Map<string, string> = new Map()): Stage[] {
  const out: Stage[] = [];
  let prev: { g: number; f: Frame }[] = [];
  hits.forEach((h, hit) => {
    const flat = h.chain.flatMap((s) => s.frames.map((f) => ({ g: s.goroutine, f })));
    let p = 0;
    while (p < prev.length && p < flat.length && same(prev[p]!, flat[p]!)) p++;
    for (const { g, f } of flat.slice(p)) {
      const m = moduleFile(f.file);
      if (!m) continue; // the runtime and the standard library: not in the module cache
      const version = replaced.get(m.module) ?? m.version;
      const url = sourceUrl(m.module, version, m.path, f.line);
      const ref = `${m.module}@${version}/${m.path}:${f.line}`;
      out.push({
        n: out.length + 1,
        function: f.function,
        ref,
        ...(version !== m.version ? { delveVersion: m.version } : {}),
        ...(url ? { url } : {}),
        goroutine: g,
        hit,
      });
    }
    prev = flat;
  });
  markCurriculum(out, hits.find((h) => h.sink === 'schema-validation')?.function);
  return out;
}

/** Each of the nine at the first stage, after the previous one's, that is that stage; a stage not seen stays unmarked. */
function markCurriculum(stages: Stage[], validation: string | undefined): void {
  const file = (s: Stage) => s.ref.replace(/:\d+$/, '');
  const rules: Record<(typeof CURRICULUM)[number], (s: Stage) => boolean> = {
    // Where the request, URL and all, enters the apiserver's handler (pkg/server/handler.go).
    URL: (s) => s.function === 'k8s.io/apiserver/pkg/server.(*APIServerHandler).ServeHTTP',
    'requestinfo.go': (s) => file(s).endsWith('/pkg/endpoints/filters/requestinfo.go'),
    'authentication.go': (s) => file(s).endsWith('/pkg/endpoints/filters/authentication.go'),
    'authorization.go': (s) => file(s).endsWith('/pkg/endpoints/filters/authorization.go'),
    'mutating admission': (s) => s.function === CHAIN_ADMIT,
    'schema validation': (s) => s.function === validation,
    'validating admission': (s) => s.function === CHAIN_VALIDATE,
    'storage.Create': (s) => s.function === STORAGE_CREATE,
    'an etcd Txn': (s) => s.function === ETCD_TXN,
  };
  let from = 0;
  for (const name of CURRICULUM) {
    const i = stages.findIndex((s, k) => k >= from && rules[name](s));
    if (i < 0) continue;
    stages[i]!.curriculum = name;
    from = i + 1;
  }
}
