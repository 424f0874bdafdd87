// A minimal client of delve's JSON-RPC 2 API (service/rpc2 at v1.27.2) over any byte stream: here
// an SSH channel to the host's loopback port, so the debugger never listens beyond 127.0.0.1.
// Go's net/rpc/jsonrpc writes one JSON object per line, so replies are split on newlines.
import type { Duplex } from 'node:stream';

/** The fields of delve's api types that prove reads (api/types.go; note Tracepoint is "continue" on the wire). */
export interface DlvVariable { name: string; type: string; kind: number; value: string; len: number; children: DlvVariable[]; unreadable: string }
export interface DlvBreakpoint {
  id: number; file: string; line: number; functionName?: string; addrs?: number[];
  continue?: boolean; variables?: string[]; totalHitCount?: number; hitCount?: Record<string, number>;
}
export interface DlvThread {
  id: number; file: string; line: number; function?: { name: string }; goroutineID: number;
  breakPoint?: DlvBreakpoint; breakPointInfo?: { variables?: DlvVariable[] };
}
export interface DlvState { Pid: number; Running: boolean; Threads: DlvThread[] | null; exited: boolean; exitStatus: number }

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

export class DlvClient {
  private next = 1;
  private buf = '';
  private readonly pending = new Map<number, Pending>();
  private readonly stream: Duplex;

  constructor(stream: Duplex) {
    this.stream = stream;
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => this.onData(chunk));
    const fail = (err: Error) => { for (const p of this.pending.values()) p.reject(err); this.pending.clear(); };
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
      else p.resolve(msg.result);
    }
  }

  call<T>(method: string, arg: unknown): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.stream.write(`${JSON.stringify({ method: `RPCServer.${method}`, params: [arg], id })}\n`);
    });
  }

  /** A tracepoint: delve stops, records the hit (and evaluates `variables`), and the caller continues. */
  async trace(file: string, line: number, variables: string[]): Promise<DlvBreakpoint> {
    const out = await this.call<{ Breakpoint: DlvBreakpoint }>('CreateBreakpoint', { Breakpoint: { file, line, continue: true, variables } });
    return out.Breakpoint;
  }

  async command(name: 'continue' | 'halt'): Promise<DlvState> {
    return (await this.call<{ State: DlvState }>('Command', { name })).State;
  }

  async breakpoints(): Promise<DlvBreakpoint[]> {
    return (await this.call<{ Breakpoints: DlvBreakpoint[] }>('ListBreakpoints', { All: false })).Breakpoints;
  }

  /** Functions in the binary whose name matches the regexp (the linker drops unreachable ones). */
  async functions(filter: string): Promise<string[]> {
    return (await this.call<{ Funcs: string[] | null }>('ListFunctions', { Filter: filter })).Funcs ?? [];
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
