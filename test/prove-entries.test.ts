// A tracepoint must catch every execution of its line (harness/delve/entries.ts). The real delve and
// the real debug kube-scheduler (the cached builds `flags prove` copies to its host), run here with no
// lab: delve listens on a unix socket, kube-scheduler runs with --v=1 and a kubeconfig that does not
// exist, so it validates its logging options and exits. component-base's options.go:170 reads
// --v (`if c.Verbosity > math.MaxInt32 {`); delve's own pick for that line is a jump pad that this
// run never passes. The test reads the stops from delve itself and the line layout from its disassembly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa, type ResultPromise } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureAll } from '../core/components/binaries/index.ts';
import { DlvClient, type DlvBreakpoint } from '../harness/delve/rpc.ts';
import { PINNED_KUBERNETES } from '../lib/constants.ts';

const FILE = 'k8s.io/component-base@v0.36.3/logs/api/v1/options.go';
const dir = mkdtempSync(join(tmpdir(), 'hw-entries-'));
let dlvPath = '';
let scheduler = '';

beforeAll(async () => {
  const [debug, dlv] = await ensureAll(['kube-scheduler-debug', 'dlv'], {
    kubernetesVersion: PINNED_KUBERNETES,
  });
  scheduler = debug!.path;
  dlvPath = dlv!.path;
}, 3_600_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Delve on a unix socket with the debug kube-scheduler; `f` sets tracepoints, then the run goes to exit and each stop is counted. */
async function run(
  f: (c: DlvClient) => Promise<DlvBreakpoint[]>,
): Promise<{ bps: DlvBreakpoint[]; stops: Map<number, number> }> {
  const sock = join(dir, `dlv-${Date.now()}.sock`);
  const dlv: ResultPromise = execa(
    dlvPath,
    [
      'exec',
      scheduler,
      '--headless',
      '--api-version=2',
      `--listen=unix:${sock}`,
      '--',
      '--v=1',
      `--kubeconfig=${join(dir, 'absent.conf')}`,
    ],
    { reject: false, all: true },
  );
  try {
    const s = await (async () => {
      for (let i = 0; i < 600; i++) {
        const t = connect(sock);
        const ok = await new Promise<boolean>((res) => {
          t.once('connect', () => res(true));
          t.once('error', () => res(false));
        });
        if (ok) return t;
        t.destroy();
        await new Promise((res) => setTimeout(res, 100));
      }
      throw new Error(`delve did not listen on ${sock}: ${(await dlv).all}`);
    })();
    const c = new DlvClient(s);
    const bps = await f(c);
    const stops = new Map<number, number>();
    for (;;) {
      const st = await c.command('continue');
      if (st.exited) break;
      for (const th of st.Threads ?? [])
        if (th.breakPoint) stops.set(th.breakPoint.id, (stops.get(th.breakPoint.id) ?? 0) + 1);
    }
    await c.detachKill();
    c.close();
    return { bps, stops };
  } finally {
    dlv.kill();
    await dlv;
  }
}

/** Delve's own `file:line` breakpoint, the address prove starts from. */
const delvePick = async (c: DlvClient, line: number) =>
  (
    await c.call<{ Breakpoint: DlvBreakpoint }>('CreateBreakpoint', {
      Breakpoint: { file: FILE, line, continue: true },
    })
  ).Breakpoint;

describe('a tracepoint on every path through its line', () => {
  it("options.go:170 is hit once, where delve's own breakpoint for the line is never reached", async () => {
    const { bps, stops } = await run(async (c) => {
      const ours = await c.trace(FILE, 170, ['c.Verbosity']);
      // Delve's own pick, free again once ours moved off it.
      const own = await delvePick(c, 170);
      const before = await c.trace(FILE, 141, []);
      return [own, ours, before];
    });
    const [own, ours, before] = bps as [DlvBreakpoint, DlvBreakpoint, DlvBreakpoint];
    expect(ours.addrs).not.toEqual(own.addrs);
    expect({ file: ours.file, line: ours.line }).toEqual({ file: FILE, line: 170 });
    // Validate ran: its first line stopped once; so did line 170, at our address and not at delve's.
    expect(stops.get(before.id)).toBe(1);
    expect(stops.get(ours.id), 'our tracepoint for options.go:170').toBe(1);
    expect(stops.get(own.id) ?? 0, "delve's own pick for options.go:170").toBe(0);
  }, 600_000);

  it("delve's own address stays where nothing but pads lies before a later meeting point: a line in one block, a loop header", async () => {
    // options.go:141 is one block; options.go:148 (`for _, f := range allFlags {`) is entered again
    // from the loop's end, past its init code, which is no pad: the tracepoint must stay on the init.
    const { bps } = await run(async (c) => {
      const out: DlvBreakpoint[] = [];
      for (const line of [141, 148]) {
        const own = await delvePick(c, line);
        await c.clear(own.id);
        out.push(own, await c.trace(FILE, line, []));
      }
      return out;
    });
    expect(bps[1]!.addrs).toEqual(bps[0]!.addrs);
    expect(bps[3]!.addrs).toEqual(bps[2]!.addrs);
  }, 600_000);

  it("moved only past jumps: every instruction from delve's pick to ours on options.go:170 is an unconditional jump of that line", async () => {
    const { bps } = await run(async (c) => {
      const ours = await c.trace(FILE, 170, []);
      const own = await delvePick(c, 170);
      type Asm = { Loc: { pc: number; file: string; line: number }; Text: string };
      const insns = (
        await c.call<{ Disassemble: Asm[] }>('Disassemble', {
          Scope: { GoroutineID: -1, Frame: 0, DeferredCall: 0 },
          StartPC: own.addrs![0],
          EndPC: 0,
          Flavour: 1,
        })
      ).Disassemble;
      // Follow delve's pick the way the CPU would, through each jump, to our address.
      const seen: string[] = [];
      for (let pc = own.addrs![0]!; pc !== ours.addrs![0]; ) {
        const i = insns.find((x) => x.Loc.pc === pc)!;
        seen.push(`${i.Loc.line} ${i.Text}`);
        const m = /^jmp 0x([0-9a-f]+)$/.exec(i.Text.trim());
        expect(m, `${pc.toString(16)} ${i.Text}`).not.toBeNull();
        expect(i.Loc.line).toBe(170);
        pc = parseInt(m![1]!, 16);
        expect(seen.length).toBeLessThan(10);
      }
      expect(seen.length).toBeGreaterThan(0);
      return [own, ours];
    });
    expect(bps).toHaveLength(2);
  }, 600_000);
});
