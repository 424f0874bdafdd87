// 3.C2's resource: Thermo, one temperature in two shapes. v1 (stored) holds spec.celsius; v2
// holds spec.temperature {value, unit}. The conversion is what the drill's webhook computes, and
// 'garbage' is the break: a well-formed ConversionReview whose objects are not the kind asked for.
export type ConvertMode = 'correct' | 'garbage';

export const GROUP = 'drills.hardwire.dev';

type Obj = Record<string, unknown> & { apiVersion?: string; spec?: Record<string, unknown> };

export function convertObject(o: Obj, desired: string, mode: ConvertMode): Obj {
  if (mode === 'garbage')
    return {
      apiVersion: 'garbage.invalid/v0',
      kind: 'Garbage',
      metadata: { name: 'garbage' },
      noise: 'not a Thermo',
    };
  const from = o.apiVersion?.split('/')[1];
  const to = desired.split('/')[1];
  const spec = o.spec ?? {};
  const out: Obj = { ...o, apiVersion: desired };
  if (from === to) return out;
  if (from === 'v1' && to === 'v2') out.spec = { temperature: { value: spec.celsius, unit: 'C' } };
  else if (from === 'v2' && to === 'v1') {
    const t = (spec.temperature ?? {}) as { value?: number; unit?: string };
    const c = t.unit === 'F' ? Math.round(((((t.value ?? 0) - 32) * 5) / 9) * 100) / 100 : t.value;
    out.spec = { celsius: c };
  }
  return out;
}
