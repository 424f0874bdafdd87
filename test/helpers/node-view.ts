// What the compare lab test reads on a host itself for issue 23's node view: `ps` as the tree the
// report should equal, and kube-bench's node section (4.x) run by hand with its stock profile.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Session } from '../../core/transport/index.ts';
import type { HostProcs } from '../../harness/planes/proc-tree.ts';

type Ps = Map<number, { ppid: number; args: string }>;

async function ps(s: Session): Promise<Ps> {
  const out = (await s.exec(['ps', '-eww', '-o', 'pid=,ppid=,args='])).stdout.trim();
  return new Map(
    out
      .split('\n')
      .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l)!)
      .map((m) => [Number(m[1]), { ppid: Number(m[2]), args: m[3]! }]),
  );
}

/**
 * "pid ppid args" for every process `ps` lists twice a second apart, but sshd and its sessions (this
 * test's own among them: everything below the listener) and zombies or kernel threads ("[name]").
 */
export async function psLines(s: Session): Promise<string[]> {
  const a = await ps(s);
  await new Promise((r) => setTimeout(r, 1000));
  const b = await ps(s);
  const listener = [...b]
    .filter(([, p]) => p.ppid === 1 && /^(sshd:|\/usr\/sbin\/sshd)/.test(p.args))
    .map(([pid]) => pid);
  const drop = new Set<number>();
  const below = (pid: number) => {
    for (const [c, p] of b)
      if (p.ppid === pid && !drop.has(c)) {
        drop.add(c);
        below(c);
      }
  };
  for (const l of listener) {
    drop.add(l);
    below(l);
  }
  return [...b]
    .filter(
      ([pid, p]) =>
        !drop.has(pid) &&
        !/^\[.*\]( <defunct>)?$/.test(p.args) &&
        a.get(pid)?.args === p.args &&
        a.get(pid)?.ppid === p.ppid,
    )
    .map(([pid, p]) => `${pid} ${p.ppid} ${p.args}`)
    .sort();
}

export const reportedLines = (h: HostProcs): string[] =>
  h.procs.map((p) => `${p.pid} ${p.ppid} ${p.argv.join(' ')}`).sort();

/** ps on the host equals the report's tree; a process that started or ended since the report was read makes it retry, three times. */
export async function psMatches(
  s: Session,
  h: HostProcs,
): Promise<{ seen: string[]; reported: string[] }> {
  const reported = reportedLines(h);
  let seen: string[] = [];
  for (let i = 0; i < 3; i++) {
    seen = await psLines(s);
    if (JSON.stringify(seen) === JSON.stringify(reported)) break;
  }
  return { seen, reported };
}

/** kube-bench's node target with its stock profile (kubeadm's layout) in a directory of its own; check id -> status. */
export async function kubeBenchNode(
  s: Session,
  binary: string,
  cfgDir: string,
): Promise<Map<string, string>> {
  const dir = '/tmp/nodeview-test-kb';
  await s.exec(['rm', '-rf', dir]);
  await s.exec(['mkdir', '-p', dir]);
  try {
    await s.writeFileAtomic(`${dir}/kube-bench`, readFileSync(binary), { mode: 0o755 });
    const cfg = execFileSync('tar', ['-czf', '-', '-C', dirname(cfgDir), 'cfg'], {
      maxBuffer: 1e8,
    });
    await s.exec(['tar', '-xzf', '-', '-C', dir, '--no-same-owner'], { stdin: cfg });
    const r = await s.exec(
      [
        `${dir}/kube-bench`,
        '--config-dir',
        `${dir}/cfg`,
        '--config',
        `${dir}/cfg/config.yaml`,
        '--benchmark',
        'cis-1.12',
        'run',
        '--targets',
        'node',
        '--json',
      ],
      { timeoutMs: 300_000 },
    );
    const doc = JSON.parse(r.stdout.split('\n').find((l) => l.startsWith('{"Controls"'))!) as {
      Controls: { tests: { results: { test_number: string; status: string }[] }[] }[];
    };
    return new Map(
      doc.Controls.flatMap((c) =>
        c.tests.flatMap((t) => t.results.map((x) => [x.test_number, x.status] as [string, string])),
      ),
    );
  } finally {
    await s.exec(['rm', '-rf', dir]);
  }
}
