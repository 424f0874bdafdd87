// Samples health once a second from a list of probes, whatever plane they probe: hardwire's units,
// or k0s's controller and the components its supervisor runs (drills/k0s-probes.ts). From the samples: which
// probe went down, when, and for how long.
import { sleep } from './connected.ts';
export interface ProbeResult {
  ok: boolean;
  detail: string;
}

export interface Probe {
  name: string;
  /** The component the probe speaks for (etcd, kube-apiserver, a Lease's controller, k0s...). */
  component: string;
  host?: string;
  check(): Promise<ProbeResult>;
}

export interface Sample extends ProbeResult {
  at: number;
}

export interface Outage {
  probe: string;
  component: string;
  host?: string;
  downAt: string;
  upAt: string | null;
  downMs: number | null;
  firstDetail: string;
}

export interface SampleOptions {
  intervalMs: number;
  maxMs: number;
  /** Stop once something went down and every probe has then been ok this many samples in a row. */
  settleSamples: number;
}

export async function sample(probes: Probe[], o: SampleOptions): Promise<Map<string, Sample[]>> {
  const series = new Map<string, Sample[]>(probes.map((p) => [p.name, []]));
  const t0 = Date.now();
  let sawDown = false;
  let okRun = 0;
  while (Date.now() - t0 < o.maxMs) {
    const tick = Date.now();
    const results = await Promise.all(
      probes.map((p) =>
        p.check().catch((e: unknown) => ({
          ok: false,
          detail: e instanceof Error ? e.message : String(e),
        })),
      ),
    );
    results.forEach((r, i) => series.get(probes[i]!.name)!.push({ ...r, at: tick }));
    const allOk = results.every((r) => r.ok);
    sawDown ||= !allOk;
    okRun = allOk ? okRun + 1 : 0;
    if (sawDown && okRun >= o.settleSamples) break;
    await sleep(Math.max(0, o.intervalMs - (Date.now() - tick)));
  }
  return series;
}

/** Each stretch of failed samples per probe; upAt null when it was still down at the end. */
export function outages(probes: Probe[], series: Map<string, Sample[]>): Outage[] {
  const out: Outage[] = [];
  for (const p of probes) {
    let down: Sample | undefined;
    for (const s of series.get(p.name) ?? []) {
      if (!s.ok && !down) down = s;
      if (s.ok && down) {
        out.push({
          probe: p.name,
          component: p.component,
          ...(p.host ? { host: p.host } : {}),
          downAt: new Date(down.at).toISOString(),
          upAt: new Date(s.at).toISOString(),
          downMs: s.at - down.at,
          firstDetail: down.detail,
        });
        down = undefined;
      }
    }
    if (down)
      out.push({
        probe: p.name,
        component: p.component,
        ...(p.host ? { host: p.host } : {}),
        downAt: new Date(down.at).toISOString(),
        upAt: null,
        downMs: null,
        firstDetail: down.detail,
      });
  }
  return out.sort((a, b) => a.downAt.localeCompare(b.downAt));
}
