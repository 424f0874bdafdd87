// What k0s's controller command runs, read from its source at the tag: every component it adds to
// its node and cluster component managers (cmd/controller/controller.go, `…Components.Add(ctx, X)`),
// the condition it is added under, and the --disable-components name that condition tests. Which
// of them are separate processes is decided by the live process tree, not by this file.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface K0sComponent {
  /** Go expression added to the manager, e.g. "controller.APIServer", "controller.NewCSRApprover". */
  expr: string;
  /** Readable name: "APIServer", "CSRApprover". */
  name: string;
  manager: 'node' | 'cluster';
  /** The `if` it is added under (trimmed), when any. */
  condition?: string;
  /** Its --disable-components name, when the condition tests one. */
  disableAs?: string;
  /** The supervised child process it starts, when it starts one (see CHILD_OF). */
  process?: string;
  at: { file: string; line: number; url: string };
}

/**
 * Components that start a supervised child rather than run inside the k0s process. Each maps to the
 * process name seen in the tree; the caller checks that the child is really there.
 */
export const CHILD_OF: Record<string, string> = {
  storageBackend: 'etcd',
  'controller.APIServer': 'kube-apiserver',
  'controller.Konnectivity': 'konnectivity-server',
  'controller.Scheduler': 'kube-scheduler',
  'controller.Manager': 'kube-controller-manager',
  'controller.K0SControlAPI': 'k0s api',
  'cplb.Keepalived': 'keepalived',
};

const FILE = 'cmd/controller/controller.go';

/** Constant name -> component name, from pkg/constant (e.g. CsrApproverComponentName -> csr-approver). */
function componentNames(tree: string): Map<string, string> {
  const out = new Map<string, string>();
  const text = readFileSync(join(tree, 'pkg', 'constant', 'constant.go'), 'utf8');
  for (const [, k, v] of text.matchAll(/^\s*(\w+Component[Nn]ame)\s*=\s*"([^"]+)"/gm))
    out.set(k!, v!);
  return out;
}

export function k0sComponents(tree: string, tag: string): K0sComponent[] | undefined {
  const path = join(tree, FILE);
  if (!existsSync(path)) return undefined;
  const names = componentNames(tree);
  const lines = readFileSync(path, 'utf8').split('\n');
  const out: K0sComponent[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /\b(node|cluster)Components\.Add\(/.exec(lines[i]!);
    if (!m) continue;
    const text = lines.slice(i, i + 4).join(' ');
    const e = /Add\(\s*ctx,\s*&?([\w.]+)/.exec(text);
    if (!e) continue;
    const expr = e[1]!;
    const indent = /^\s*/.exec(lines[i]!)![0].length;
    let condition: string | undefined;
    for (let j = i - 1; j >= 0; j--) {
      const l = lines[j]!;
      const ind = /^\s*/.exec(l)![0].length;
      if (l.trim() === '' || ind >= indent) continue;
      if (/^\s*(if|\} else if) /.test(l)) condition = l.trim().replace(/\s*\{$/, '');
      break;
    }
    const constant = condition ? /constant\.(\w+Component[Nn]ame)/.exec(condition)?.[1] : undefined;
    const disableAs = constant ? names.get(constant) : undefined;
    out.push({
      expr,
      name: expr.replace(/^controller\./, '').replace(/^New/, ''),
      manager: m[1] as 'node' | 'cluster',
      ...(condition ? { condition } : {}),
      ...(disableAs ? { disableAs } : {}),
      ...(CHILD_OF[expr] ? { process: CHILD_OF[expr] } : {}),
      at: {
        file: FILE,
        line: i + 1,
        url: `https://github.com/k0sproject/k0s/blob/${encodeURIComponent(tag)}/${FILE}#L${i + 1}`,
      },
    });
  }
  return out;
}

/** The valid --disable-components names, from `k0s controller --help` as the binary prints them. */
export function disableList(help: string): string[] {
  const m = /--disable-components[^\n]*valid items: ([^)]+)\)/.exec(help);
  return m
    ? m[1]!
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : [];
}
