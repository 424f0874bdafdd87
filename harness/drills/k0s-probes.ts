// The k0s plane's probe list for drills/sampler.ts: the k0scontroller unit as systemd sees it,
// etcd's /health, kube-apiserver's /readyz, both controllers' Leases, and each child k0s supervises
// (present or not, its PID and parent PID). One `systemctl show` + `ps` per tick serves every
// process probe, and every such snapshot is kept: what happened to the children is read from them.
import { CHILD_OF } from '../planes/k0s/components.ts';
import { processName } from '../planes/k0s/controller.ts';
import { readLease } from '../../core/gates/leases.ts';
import { kubeRequest, type KubeCreds } from '../../core/transport/kube-api.ts';
import { flagsOf } from '../planes/normalize.ts';
import type { Session } from '../../core/transport/index.ts';
import { parseShow, showArgv } from '../../core/transport/systemctl.ts';
import { shJoin } from '../../lib/quote.ts';
import type { Probe, ProbeResult } from './sampler.ts';
import { LEASE_DURATION_MS } from './probes.ts';
import { errText } from './symptoms.ts';
import { K0S_LEASES, K0S_UNIT, RENEWING_MS } from './k0s-lab.ts';
import { unitOf } from '../../lib/unit.ts';

/** The separate processes k0s's controller supervises with default components (keepalived is off). */
export const K0S_CHILDREN = Object.values(CHILD_OF).filter((n) => n !== 'keepalived');

export interface Proc {
  pid: number;
  ppid: number;
  name: string;
}
export interface UnitSnap {
  active: string;
  sub: string;
  mainPid: number;
  nRestarts: number;
  execMainStart: string;
}
export interface HostSnap {
  at: number;
  unit: UnitSnap;
  procs: Proc[];
}

const SCRIPT = `${shJoin(showArgv([K0S_UNIT], ['ActiveState', 'SubState', 'MainPID', 'NRestarts', 'ExecMainStartTimestamp']))}; echo @@; ps -e -o pid=,ppid=,stat=,args=`;

export function parseSnap(at: number, out: string): HostSnap {
  const [show = '', ps = ''] = out.split('\n@@\n');
  const kv = parseShow(show)[0] ?? {};
  const procs = ps
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((w) => w.length >= 4 && !w[2]!.startsWith('Z'))
    .map((w) => ({ pid: Number(w[0]), ppid: Number(w[1]), name: processName(w.slice(3)) }));
  return {
    at,
    unit: {
      active: kv.ActiveState ?? '',
      sub: kv.SubState ?? '',
      mainPid: Number(kv.MainPID ?? 0),
      nRestarts: Number(kv.NRestarts ?? NaN),
      execMainStart: kv.ExecMainStartTimestamp ?? '',
    },
    procs,
  };
}

/** Host snapshots, at most one per 500 ms: the probes of one tick share one. */
export class HostWatch {
  readonly snaps: HostSnap[] = [];
  #last: { at: number; p: Promise<HostSnap> } | undefined;
  readonly #s: Session;

  constructor(s: Session) {
    this.#s = s;
  }

  current(): Promise<HostSnap> {
    if (this.#last && Date.now() - this.#last.at < 500) return this.#last.p;
    const at = Date.now();
    const p = this.#s.exec(['sh', '-c', SCRIPT], { timeoutMs: 10_000 }).then((r) => {
      const snap = parseSnap(at, r.stdout);
      this.snaps.push(snap);
      return snap;
    });
    this.#last = { at, p };
    return p;
  }
}

/** etcd as kube-apiserver reaches it: its --etcd-servers and client cert, read from its live argv. */
export interface EtcdClient {
  url: string;
  ca: string;
  cert: string;
  key: string;
}

export function etcdClientOf(apiserverArgv: string[]): EtcdClient {
  const f = flagsOf(apiserverArgv);
  const need = (k: string) => {
    const v = f.get(k);
    if (!v) throw new Error(`kube-apiserver has no --${k}`);
    return v;
  };
  return {
    url: need('etcd-servers').split(',')[0]!,
    ca: need('etcd-cafile'),
    cert: need('etcd-certfile'),
    key: need('etcd-keyfile'),
  };
}

async function etcdHealth(s: Session, e: EtcdClient): Promise<ProbeResult> {
  const r = await s.exec(
    [
      'curl',
      '-sS',
      '--max-time',
      '3',
      '--cacert',
      e.ca,
      '--cert',
      e.cert,
      '--key',
      e.key,
      `${e.url}/health`,
    ],
    { allowFail: true, timeoutMs: 10_000 },
  );
  const body = r.stdout.trim();
  let health = '';
  try {
    health = String((JSON.parse(body) as { health?: unknown }).health);
  } catch {
    /* not JSON: curl's error below */
  }
  return {
    ok: r.code === 0 && health === 'true',
    detail:
      r.code === 0
        ? `${e.url}/health ${body}`
        : `${e.url}/health: ${r.stderr.trim().split('\n').pop()}`,
  };
}

async function readyz(creds: KubeCreds): Promise<ProbeResult> {
  try {
    const r = await kubeRequest(creds, 'GET', '/readyz', { timeoutMs: 3000 });
    return { ok: r.status === 200, detail: `/readyz ${r.status}` };
  } catch (e) {
    return { ok: false, detail: `/readyz: ${errText(e)}` };
  }
}

async function lease(creds: KubeCreds, name: string): Promise<ProbeResult> {
  try {
    const l = await readLease(creds, name);
    return {
      ok: l.holder !== '' && l.ageMs <= RENEWING_MS,
      detail: `held by ${l.holder || 'nobody'}, renewed ${Math.round(l.ageMs / 1000)} s ago (renewing means within ${RENEWING_MS / 1000} s; valid ${LEASE_DURATION_MS / 1000} s)`,
    };
  } catch (e) {
    return { ok: false, detail: `cannot read: ${errText(e)}` };
  }
}

/** A child is up while a process of that name runs; who its parent is goes in the detail. */
function childProbe(w: HostWatch, name: string, host: string): Probe {
  return {
    name: `${name} process`,
    component: name,
    host,
    check: async () => {
      const snap = await w.current();
      const p = snap.procs.filter((x) => x.name === name);
      if (p.length === 0) return { ok: false, detail: 'no such process' };
      const under = (x: Proc) =>
        x.ppid === snap.unit.mainPid && x.ppid > 0 ? 'under k0s' : `orphaned, parent ${x.ppid}`;
      return {
        ok: true,
        detail: p.map((x) => `pid ${x.pid}, ppid ${x.ppid} (${under(x)})`).join('; '),
      };
    },
  };
}

export function k0sProbes(
  w: HostWatch,
  s: Session,
  creds: KubeCreds,
  etcd: EtcdClient,
  host: string,
): Probe[] {
  return [
    {
      name: unitOf(K0S_UNIT),
      component: 'k0s controller',
      host,
      check: async () => {
        const u = (await w.current()).unit;
        return {
          ok: u.active === 'active' && u.mainPid > 0,
          detail: `${u.active}/${u.sub}, MainPID ${u.mainPid}, NRestarts ${u.nRestarts}`,
        };
      },
    },
    { name: 'etcd /health', component: 'etcd', host, check: () => etcdHealth(s, etcd) },
    { name: '/readyz', component: 'kube-apiserver', host, check: () => readyz(creds) },
    ...K0S_LEASES.map((l) => ({ name: `Lease ${l}`, component: l, check: () => lease(creds, l) })),
    ...K0S_CHILDREN.map((c) => childProbe(w, c, host)),
  ];
}
