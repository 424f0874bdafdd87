// A minimal client of delve's JSON-RPC 2 API (service/rpc2 at v1.27.2) over any byte stream: here
// an SSH channel to the host's loopback port, so the debugger never listens beyond 127.0.0.1.
// Go's net/rpc/jsonrpc writes one JSON object per line, so replies are split on newlines.
import type { Duplex } from 'node:stream';
import { lineAddr, type Insn } from './entries.ts';

/** The fields of delve's api types that prove reads (api/types.go; note Tracepoint is "continue" on the wire). */
export interface DlvVariable {
  name: string;
  type: string;
  kind: number;
  value: string;
  len: number;
  children: DlvVariable[];
  unreadable: string;
}
export interface DlvBreakpoint {
  id: number;
  file: string;
  line: number;
  functionName?: string;
  addrs?: number[];
  continue?: boolean;
  variables?: string[];
  totalHitCount?: number;
  hitCount?: Record<string, number>;
}
export interface DlvThread {
  id: number;
  file: string;
  line: number;
  function?: { name: string };
  goroutineID: number;
  breakPoint?: DlvBreakpoint;
  breakPointInfo?: { variables?: DlvVariable[] };
}
export interface DlvState {
  Pid: number;
  Running: boolean;
  Threads: DlvThread[] | null;
  exited: boolean;
  exitStatus: number;
}

type Pending = { resolve: (v: unknown, raw: string) => void; reject: (e: Error) => void };

/** One frame of a goroutine's stack as delve returns it (api.Stackframe: Location plus more). */
export interface DlvFrame {
  file: string;
  line: number;
  function?: { name: string };
}

export class DlvClient {
  private next = 1;
  private buf = '';
  private readonly pending = new Map<number, Pending>();
  private readonly stream: Duplex;

  constructor(stream: Duplex) {
    this.stream = stream;
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => this.onData(chunk));
    const fail = (err: Error) => {
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    stream.on('error', fail);
    stream.on('close', () => fail(new Error('delve closed the connection')));
  }

  private onData(chunk: string): void {
    this.buf += chunk;
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl).trim();
      this.buf = this.buf.slice(nl + 1);
      if (!line) continue;
      const msg = JSON.parse(line) as { id: number; result: unknown; error: string | null };
      const p = this.pending.get(msg.id);
      if (!p) continue;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new Error(msg.error));
      else p.resolve(msg.result, line);
    }
  }

  call<T>(method: string, arg: unknown): Promise<T> {
    return this.callRaw<T>(method, arg).then((r) => r.result);
  }

  /** The parsed result and delve's reply line verbatim, for a report that keeps delve's own answer. */
  callRaw<T>(method: string, arg: unknown): Promise<{ result: T; raw: string }> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, {
        resolve: (result, raw) => resolve({ result: result as T, raw }),
        reject,
      });
      this.stream.write(
        `${JSON.stringify({ method: `RPCServer.${method}`, params: [arg], id })}\n`,
      );
    });
  }

  /** A breakpoint at a function's entry (after its prologue). */
  async breakAtFunction(functionName: string): Promise<DlvBreakpoint> {
    return (
      await this.call<{ Breakpoint: DlvBreakpoint }>('CreateBreakpoint', {
        Breakpoint: { functionName },
      })
    ).Breakpoint;
  }

  /** A string expression in a stopped goroutine's innermost frame, read whole (a breakpoint's own variables stop at 64 bytes). */
  async evalString(goroutine: number, expr: string): Promise<string> {
    const cfg = {
      FollowPointers: true,
      MaxVariableRecurse: 1,
      MaxStringLen: 4096,
      MaxArrayValues: 64,
      MaxStructFields: -1,
    };
    return (
      await this.call<{ Variable: DlvVariable }>('Eval', {
        Scope: { GoroutineID: goroutine, Frame: 0, DeferredCall: 0 },
        Expr: expr,
        Cfg: cfg,
      })
    ).Variable.value;
  }

  /** A goroutine's stack, innermost frame first. */
  stacktrace(
    goroutine: number,
    depth: number,
  ): Promise<{ result: { Locations: DlvFrame[] | null }; raw: string }> {
    return this.callRaw('Stacktrace', { Id: goroutine, Depth: depth });
  }

  /** The goroutines that started this one, nearest first (needs GODEBUG=tracebackancestors=N in the debuggee). */
  ancestors(
    goroutine: number,
    n: number,
  ): Promise<{ result: { Ancestors: { ID: number; Unreadable?: string }[] | null }; raw: string }> {
    return this.callRaw('Ancestors', { GoroutineID: goroutine, NumAncestors: n, Depth: 1 });
  }

  /**
   * A tracepoint: delve stops, records the hit (and evaluates `variables`), and the caller continues.
   * Set where every execution of the line passes (entries.ts), which is not always delve's own pick.
   */
  async trace(file: string, line: number, variables: string[]): Promise<DlvBreakpoint> {
    const bp = { continue: true, variables };
    const first = (
      await this.call<{ Breakpoint: DlvBreakpoint }>('CreateBreakpoint', {
        Breakpoint: { file, line, ...bp },
      })
    ).Breakpoint;
    const picked = first.addrs ?? [];
    const addrs: number[] = [];
    for (const pc of picked)
      addrs.push(lineAddr(await this.functionAt(pc), first.file, first.line, pc));
    if (addrs.every((a, i) => a === picked[i])) return first;
    await this.clear(first.id);
    return (
      await this.call<{ Breakpoint: DlvBreakpoint }>('CreateBreakpoint', {
        Breakpoint: { addrs, ...bp },
      })
    ).Breakpoint;
  }

  private readonly disassembled: { from: number; to: number; insns: Insn[] }[] = [];

  /** The whole function holding `pc`, disassembled once per client. */
  private async functionAt(pc: number): Promise<Insn[]> {
    const known = this.disassembled.find((f) => pc >= f.from && pc <= f.to);
    if (known) return known.insns;
    type Asm = { Loc: { pc: number; file: string; line: number }; Text: string };
    const out = await this.call<{ Disassemble: Asm[] | null }>('Disassemble', {
      Scope: { GoroutineID: -1, Frame: 0, DeferredCall: 0 },
      StartPC: pc,
      EndPC: 0,
      Flavour: 1,
    });
    const insns = (out.Disassemble ?? []).map((a) => ({
      pc: a.Loc.pc,
      file: a.Loc.file,
      line: a.Loc.line,
      text: a.Text,
    }));
    if (insns.length) this.disassembled.push({ from: insns[0]!.pc, to: insns.at(-1)!.pc, insns });
    return insns;
  }

  async command(name: 'continue' | 'halt'): Promise<DlvState> {
    return (await this.call<{ State: DlvState }>('Command', { name })).State;
  }

  /** The same, with delve's reply line verbatim. */
  async commandRaw(name: 'continue' | 'halt'): Promise<{ state: DlvState; raw: string }> {
    const r = await this.callRaw<{ State: DlvState }>('Command', { name });
    return { state: r.result.State, raw: r.raw };
  }

  async breakpoints(): Promise<DlvBreakpoint[]> {
    return (await this.call<{ Breakpoints: DlvBreakpoint[] }>('ListBreakpoints', { All: false }))
      .Breakpoints;
  }

  /** Functions in the binary whose name matches the regexp (the linker drops unreachable ones). */
  async functions(filter: string): Promise<string[]> {
    return (
      (await this.call<{ Funcs: string[] | null }>('ListFunctions', { Filter: filter })).Funcs ?? []
    );
  }

  async clear(id: number): Promise<void> {
    await this.call('ClearBreakpoint', { Id: id });
  }

  /** Kills the debuggee and ends the headless server (it was started without --accept-multiclient persistence). */
  async detachKill(): Promise<void> {
    await this.call('Detach', { Kill: true }).catch(() => undefined);
  }

  close(): void {
    this.stream.end();
  }
}
