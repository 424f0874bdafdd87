// The CIS benchmark's checks on component flags, as kube-bench states them (cfg/<benchmark>/*.yaml,
// test_items with flag, set, compare.op/value), and kube-bench's own way of judging a flag's value
// against them (check/test.go compareOp, check/check.go execute). validate/weakening.ts refuses an
// extraArgs override that fails one. cis-checks.json is generated from kube-bench's source archive by
// scripts/cis-checks.ts; test/weakening.test.ts regenerates it and compares byte for byte.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../../lib/paths.ts';
import type { PerComponent } from '../components/registry/index.ts';

/** The benchmark hardwire is scanned against (harness/cis/scan.ts runs kube-bench with it). */
export const CIS_BENCHMARK = 'cis-1.12';
/** The benchmark's files that check components (policies.yaml checks cluster objects, not flags). */
export const CIS_FILES = ['master.yaml', 'controlplane.yaml', 'etcd.yaml', 'node.yaml'] as const;

export interface CisItem {
  /** Without the leading "--". */
  flag: string;
  /** kube-bench's `set` (default true): false means the flag must be absent. */
  set: boolean;
  op?: string;
  value?: string;
}

export interface CisCheck {
  id: string;
  /** kube-bench's text without its "(Automated)"/"(Manual)" tail. */
  text: string;
  component: string;
  binOp: 'and' | 'or';
  items: CisItem[];
}

export interface CisTable {
  generatedBy: string;
  from: string;
  checks: CisCheck[];
}

/**
 * kube-bench's variable for each component's process ($apiserverbin in an audit command), or null
 * for one its benchmark has no checks of.
 */
const KUBE_BENCH_BIN: PerComponent<string | null> = {
  etcd: 'etcdbin',
  'kube-apiserver': 'apiserverbin',
  'kube-controller-manager': 'controllermanagerbin',
  'kube-scheduler': 'schedulerbin',
  containerd: null,
  'kube-vip': null,
  registry: null,
  kubelet: 'kubeletbin',
  'kube-proxy': 'proxybin',
};
const AUDIT_BINS: Record<string, string> = Object.fromEntries(
  Object.entries(KUBE_BENCH_BIN).flatMap(([c, v]) => (v ? [[v, c]] : [])),
);

/**
 * kube-bench's parser (go-yaml v2) takes a double-quoted scalar whose next line is indented no deeper
 * than its key (etcd.yaml 2.4's text); the yaml package follows the YAML spec and refuses it. Such a
 * continuation line is indented two more, which changes no value.
 */
function indentContinuations(text: string): string {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)[a-z_]+: "([^"\\]|\\.)*$/.exec(lines[i]!);
    if (!open) continue;
    for (let j = i + 1; j < lines.length; j++) {
      lines[j] = `${open[1]}  ${lines[j]!.trimStart()}`;
      if (/(^|[^\\])"/.test(lines[j]!)) break;
    }
  }
  return lines.join('\n');
}

interface RawCheck {
  id: string;
  text: string;
  audit?: string;
  tests?: {
    bin_op?: string;
    test_items: { flag: string; set?: string; compare?: { op: string; value: string } }[];
  };
}

/**
 * The checks of one benchmark whose audit reads one component's command line and whose every test
 * item names a `--flag` (file permission checks, the encryption config's providers and feature-gate
 * keys are not flags an override sets). The failsafe schema keeps every value a string, as
 * kube-bench's compare.value is.
 */
export function cisChecksFrom(files: Record<string, string>): CisCheck[] {
  const checks: CisCheck[] = [];
  for (const name of CIS_FILES) {
    const doc = parse(indentContinuations(files[name] ?? ''), { schema: 'failsafe' }) as {
      groups: { checks: RawCheck[] }[];
    };
    for (const c of doc.groups.flatMap((g) => g.checks)) {
      const bins = [...new Set([...(c.audit ?? '').matchAll(/\$(\w+bin)\b/g)].map((m) => m[1]!))];
      const component = bins.length === 1 ? AUDIT_BINS[bins[0]!] : undefined;
      const raw = c.tests?.test_items ?? [];
      if (!component || raw.length === 0 || !raw.every((t) => t.flag.startsWith('--'))) continue;
      checks.push({
        id: c.id,
        text: c.text.replace(/\s+/g, ' ').replace(/ \((Automated|Manual)\)$/, ''),
        component,
        binOp: c.tests!.bin_op === 'or' ? 'or' : 'and',
        items: raw.map((t) => ({
          flag: t.flag.slice(2),
          set: t.set !== 'false',
          ...(t.compare ? { op: t.compare.op, value: t.compare.value } : {}),
        })),
      });
    }
  }
  return checks;
}

export const CIS_TABLE_FILE = join(repoRoot, 'core', 'validate', 'cis-checks.json');

let table: CisTable | undefined;
export function cisTable(): CisTable {
  table ??= JSON.parse(readFileSync(CIS_TABLE_FILE, 'utf8')) as CisTable;
  return table;
}

/** kube-bench's compareOp (check/test.go) for the ops the component checks use. */
function compare(op: string, got: string, want: string): boolean {
  const bool = got.toLowerCase();
  const eq = bool === 'true' || bool === 'false' ? bool === want : got === want;
  const list = (s: string) =>
    s
      .trim()
      .replace(/,+$/, '')
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x !== '');
  switch (op) {
    case 'eq':
      return eq;
    case 'noteq':
      return !eq;
    case 'has':
      return got.includes(want);
    case 'nothave':
      return !got.includes(want);
    case 'gte':
    case 'gt':
    case 'lte':
    case 'lt': {
      const [a, b] = [Number.parseInt(got.trim(), 10), Number.parseInt(want.trim(), 10)];
      if (!/^[-+]?\d+$/.test(got.trim()) || Number.isNaN(b)) return false;
      return op === 'gte' ? a >= b : op === 'gt' ? a > b : op === 'lte' ? a <= b : a < b;
    }
    case 'valid_elements': {
      const allowed = list(want);
      const have = list(got);
      return have.length === 0 ? allowed.length === 0 : have.every((x) => allowed.includes(x));
    }
    default:
      throw new Error(
        `kube-bench compare op "${op}" is not implemented here (core/validate/cis-checks.ts)`,
      );
  }
}

/**
 * Whether a check's items about `flag` pass when the flag is `value` (undefined: not on the command
 * line). kube-bench reads `--flag=` as a bare boolean and passes a presence check with it (check/test.go
 * findValue); to the component an empty path is no file at all (encryption at rest is then off,
 * k8s.io/apiserver@v0.36.3 pkg/server/options/etcd.go:285), so here an empty value is not set.
 */
export function itemsPass(
  check: CisCheck,
  flag: string,
  value: string | undefined,
): boolean | undefined {
  const items = check.items.filter((i) => i.flag === flag);
  if (items.length === 0) return undefined;
  const found = value !== undefined && value !== '';
  const results = items.map((i) => {
    if (!i.set) return !found;
    if (!found) return false;
    return i.op ? compare(i.op, value, i.value ?? '') : true;
  });
  return check.binOp === 'or' ? results.some(Boolean) : results.every(Boolean);
}
