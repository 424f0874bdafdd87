// kill-one's k0s half, end to end: `hardwire drill kill-one --plane k0s --keep-labs` brings up its own
// 1-host k0s lab ("dk0s"), SIGKILLs the k0s controller and reports. While it runs, this test watches
// the host itself once a second (systemctl show, ps, /readyz with k0s's admin cert), and afterwards
// reads the kept host: NRestarts, the children's parents, the journal. The report is checked
// against that evidence, never the other way round.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labConnect, labDown, labStatus } from '../harness/lab/index.ts';
import type { Session } from '../core/transport/index.ts';
import { hardwire } from './helpers/cli.ts';
import { hardwireAsync } from './helpers/cli-async.ts';
import { inJournal } from './helpers/journal.ts';
import type { JournalLine } from '../harness/drills/journal.ts';
import type { TestLab } from './helpers/lab.ts';

const LAB = 'dk0s';
// Stable per lab name, as in helpers/lab.ts: a crashed run is cleaned up by the next one.
const stateDir = join(tmpdir(), 'hardwire-test-labs', LAB);
const tmp = mkdtempSync(join(tmpdir(), 'hardwire-dk0s-'));
const CHILDREN = [
  'etcd',
  'kube-apiserver',
  'konnectivity-server',
  'k0s api',
  'kube-scheduler',
  'kube-controller-manager',
];
const PKI = '/var/lib/k0s/pki';

interface View {
  at: number;
  mainPid: number;
  nRestarts: number;
  procs: { pid: number; ppid: number; name: string }[];
  readyz: string;
}

/** One look at the host: what systemd says of k0scontroller, every process, and /readyz as admin. */
const SCRIPT = `systemctl show k0scontroller -p MainPID,NRestarts; echo @@; ps -e -o pid=,ppid=,stat=,args=; echo @@; curl -s --max-time 2 --cacert ${PKI}/ca.crt --cert ${PKI}/admin.crt --key ${PKI}/admin.key https://127.0.0.1:6443/readyz || echo " curl exit $?"`;

function nameOf(args: string[]): string {
  const base = args[0]!.split('/').pop()!;
  return base === 'k0s' && args[1] && !args[1].startsWith('-') ? `k0s ${args[1]}` : base;
}

async function look(s: Session): Promise<View> {
  const at = Date.now();
  const [show = '', ps = '', readyz = ''] = (
    await s.exec(['sh', '-c', SCRIPT], { allowFail: true, timeoutMs: 15_000 })
  ).stdout.split('@@\n');
  const kv = Object.fromEntries(
    show
      .trim()
      .split('\n')
      .map((l) => l.split('=') as [string, string]),
  );
  const procs = ps
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((w) => w.length >= 4 && !w[2]!.startsWith('Z'))
    .map((w) => ({ pid: Number(w[0]), ppid: Number(w[1]), name: nameOf(w.slice(3)) }));
  return {
    at,
    mainPid: Number(kv.MainPID),
    nRestarts: Number(kv.NRestarts),
    procs,
    readyz: readyz.trim(),
  };
}

const lab: TestLab = {
  name: LAB,
  stateDir,
  info: undefined as never,
  ssh: (host) => labConnect(host, { name: LAB, stateDir }),
  down: async () => {
    await labDown({ name: LAB, stateDir });
  },
};

async function onHost(argv: string[]): Promise<string> {
  const s = await lab.ssh('node1');
  try {
    return (await s.exec(argv, { allowFail: true })).stdout;
  } finally {
    await s.close();
  }
}

interface Report {
  broken: { mainPid: number; at: string };
  captured: { host: string; unit: string; at: string; line: string }[];
  wentDown: string[];
  outages: { probe: string; component: string; downMs: number | null }[];
  k0sRestart: {
    nRestartsBefore: number;
    nRestartsAfter: number;
    newMainPid: number | null;
    newMainSeenAfterMs: number | null;
    exits: { exit: JournalLine; cause: JournalLine | null }[];
  };
  timeToDetectMs: number | null;
  children: {
    name: string;
    before: { pid: number } | null;
    afterKill: { at: string; running: boolean; ppid: number | null } | null;
    goneBy: string | null;
    replacement: { pid: number; ppid: number } | null;
    fate: string;
  }[];
  final: { mainPid: number; readyz: string };
  allBackMs: number | null;
  keptLab: boolean;
  ok: boolean;
}

const t0 = Date.now();
beforeAll(async () => {
  await labDown({ name: LAB, stateDir }).catch(() => undefined);
  rmSync(stateDir, { recursive: true, force: true });
});

afterAll(async () => {
  await labDown({ name: LAB, stateDir }).catch(() => undefined);
  rmSync(tmp, { recursive: true, force: true });
  console.log(`drill-kill-k0s: ${((Date.now() - t0) / 1000).toFixed(0)} s in all`);
});

describe('kill-one --plane k0s', () => {
  it('bad input: one line naming the field, exit 2, no lab made', () => {
    for (const [args, re] of [
      [['--plane', 'nope'], /^error: --plane: "nope" is not one of hardwire, k0s$/],
      [
        ['--plane', 'k0s', '--k0s-lab', 'Not_A_Label'],
        /^error: --k0s-lab: "Not_A_Label" must be a DNS label/,
      ],
      [
        ['--plane', 'k0s', '--k0s-lab', 'lab'],
        /^error: --k0s-lab: "lab" is the default hardwire lab/,
      ],
      [
        ['--plane', 'k0s', '--host', 'node1', '--k0s-lab', LAB],
        /^error: --host: does not apply to --plane k0s/,
      ],
      [['--keep-labs'], /^error: --keep-labs: only applies to --plane k0s$/],
    ] as const) {
      const r = hardwire(['drill', 'kill-one', ...args, '--state-dir', stateDir]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr.trim()).toMatch(re);
    }
    expect(existsSync(join(stateDir, 'lab', LAB))).toBe(false);
  });

  it('SIGKILL of k0s: systemd restarts it once per exit (a new k0s that gives up is named with its error), the new k0s runs every child under its own PID, the kill is in the journal', async () => {
    const md = join(tmp, 'k0s.md');
    let done = false;
    const child = hardwireAsync(
      [
        'drill',
        'kill-one',
        '--plane',
        'k0s',
        '--k0s-lab',
        LAB,
        '--state-dir',
        stateDir,
        '--keep-labs',
        '--json',
        '--md',
        md,
      ],
      { timeoutMs: 1_200_000 },
    ).finally(() => {
      done = true;
    });
    // Watch the host from the moment the drill's lab answers SSH.
    const views: View[] = [];
    let s: Session | undefined;
    while (!done) {
      try {
        s ??= await lab.ssh('node1');
        views.push(await look(s));
      } catch {
        await s?.close().catch(() => undefined);
        s = undefined;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
    await s?.close();
    const res = await child;
    // The report is printed whatever the exit code; the host's evidence is checked before the exit
    // code, so that a drill that broke the wrong thing fails on what the host says.
    expect(res.stdout, res.stderr.slice(-3000)).toMatch(/^\{/);
    expect(res.stdout).not.toMatch(/PRIVATE KEY|client-key-data/);
    const r = JSON.parse(res.stdout) as Report;
    expect(r.keptLab).toBe(true);
    expect((await labStatus({ name: LAB, stateDir })).hosts[0]!.ssh).toBe(true);

    // Before the kill, this test saw k0s as MainPID with every child under it; that is the PID killed.
    const killAt = Date.parse(r.broken.at);
    const before = views
      .filter(
        (v) =>
          v.at < killAt &&
          v.mainPid > 0 &&
          CHILDREN.every((c) => v.procs.some((p) => p.name === c && p.ppid === v.mainPid)),
      )
      .pop();
    expect(
      before,
      `no view of the whole tree before the kill (${views.length} views)`,
    ).toBeDefined();
    expect(r.broken.mainPid).toBe(before!.mainPid);
    expect(before!.readyz).toBe('ok');

    // On the host now: systemd restarted k0s once per exit of its main process since the kill, the
    // first exit the SIGKILL. On a loaded machine a new k0s can give up once (an orphan it terminates
    // from its PID file outlives the supervisor's 5 s stop timeout): then the report names that exit
    // and k0s's last error before it, each line verbatim in the journal.
    const nRestarts = Number(
      (await onHost(['systemctl', 'show', 'k0scontroller', '-p', 'NRestarts', '--value'])).trim(),
    );
    const mainPid = Number(
      (await onHost(['systemctl', 'show', 'k0scontroller', '-p', 'MainPID', '--value'])).trim(),
    );
    const exits = r.k0sRestart.exits;
    expect(exits[0]?.exit.line).toMatch(
      /^k0scontroller\.service: Main process exited, code=killed, status=9\/KILL$/,
    );
    expect(
      nRestarts,
      exits.map((x) => `${x.exit.line} <- ${x.cause?.line ?? '?'}`).join(' | '),
    ).toBe(before!.nRestarts + exits.length);
    for (const x of exits.slice(1)) {
      expect(x.exit.line).toMatch(/^k0scontroller\.service: Main process exited, code=exited/);
      expect(x.cause, `no k0s error line before ${x.exit.line}`).not.toBeNull();
      expect(await inJournal(lab, x.exit)).toBe(true);
      expect(await inJournal(lab, x.cause!)).toBe(true);
    }
    expect(mainPid).toBeGreaterThan(0);
    expect(mainPid).not.toBe(before!.mainPid);
    expect(r.final.mainPid).toBe(mainPid);

    // Each child runs under the new MainPID, with a PID other than the one it had under the old k0s.
    const ps = (await onHost(['ps', '-e', '-o', 'pid=,ppid=,stat=,args=']))
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/));
    for (const c of CHILDREN) {
      const now = ps.filter((w) => nameOf(w.slice(3)) === c && !w[2]!.startsWith('Z'));
      const old = before!.procs.find((p) => p.name === c)!;
      expect(
        now.map((w) => Number(w[1])),
        c,
      ).toEqual([mainPid]);
      expect(Number(now[0]![0]), c).not.toBe(old.pid);
      expect(r.children.find((x) => x.name === c)?.replacement?.ppid, c).toBe(mainPid);
    }

    // What this test saw between the kill and the restart: no MainPID, and the old children still
    // running with another parent (orphaned), as the report says.
    const gap = views.filter(
      (v) => v.at > killAt && v.mainPid === 0 && v.nRestarts === before!.nRestarts,
    );
    expect(gap.length, 'no view while k0s was down').toBeGreaterThan(0);
    // The report and this test sample at different instants, so a child can die between the two:
    // they must agree where they overlap. A child the report saw gone at its first sample after the
    // kill was never seen alive by this test later than that; one it saw running orphaned was seen
    // orphaned by this test too, or this test's first look in the gap came after it had gone.
    const orphanedAt = (name: string) =>
      gap
        .filter((v) =>
          v.procs.some(
            (p) =>
              p.pid === before!.procs.find((o) => o.name === name)!.pid &&
              p.ppid !== before!.mainPid,
          ),
        )
        .map((v) => v.at);
    for (const c of r.children) {
      const first = Date.parse(c.afterKill!.at);
      const seen = orphanedAt(c.name);
      if (c.afterKill?.running)
        expect(
          seen.length > 0 || gap[0]!.at > Date.parse(c.goneBy ?? c.afterKill.at),
          `${c.name}: ${c.fate}`,
        ).toBe(true);
      else
        expect(
          seen.filter((t) => t > first),
          `${c.name}: ${c.fate}`,
        ).toEqual([]);
    }

    // The captured line is systemd's, verbatim in k0scontroller's journal.
    expect(r.captured).toHaveLength(1);
    expect(r.captured[0]!.line).toMatch(
      /^k0scontroller\.service: Main process exited, code=killed, status=9\/KILL$/,
    );
    expect(await inJournal(lab, r.captured[0]!)).toBe(true);

    // kube-apiserver went down: this test's own /readyz failed after the kill, and the report says so.
    expect(
      views.some((v) => v.at > killAt && v.readyz !== 'ok'),
      'this test never saw /readyz fail',
    ).toBe(true);
    expect(r.wentDown).toContain('kube-apiserver');
    expect(r.wentDown).toContain('k0s controller');
    expect(r.outages.find((o) => o.probe === '/readyz')?.downMs).toBeGreaterThan(0);

    // /readyz ok at the end, asked on the host with k0s's own kubectl.
    expect(
      (await onHost(['/usr/local/bin/k0s', 'kubectl', 'get', '--raw', '/readyz'])).trim(),
    ).toBe('ok');
    expect(r.ok).toBe(true);
    expect(res.code, res.stderr.slice(-3000)).toBe(0);
    expect(readFileSync(md, 'utf8')).toMatch(/## Kill one process: hardwire vs k0s/);
    console.log(
      `kill-one k0s: detect ${r.timeToDetectMs} ms; new k0s seen after ${r.k0sRestart.newMainSeenAfterMs} ms; wentDown ${r.wentDown.join(', ')}; all back ${r.allBackMs} ms; ${JSON.stringify(r.outages.map((o) => [o.probe, o.downMs]))}; ${r.children.map((c) => `${c.name}: ${c.fate}`).join(' | ')}`,
    );
  }, 1_500_000);
});
