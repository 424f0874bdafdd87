// Comparing the value delve read at a hit with the flag's value in the unit. Only kinds whose
// text form is unambiguous are compared; anything else is shown as seen, not judged.
import type { DlvVariable } from '../delve/rpc.ts';
import { goDurationNs as durationNs } from '../../lib/go-duration.ts';

// reflect.Kind numbers, as delve sends them.
const BOOL = 1,
  INT_FIRST = 2,
  UINT_LAST = 12,
  FLOAT_FIRST = 13,
  FLOAT_LAST = 14,
  PTR = 22,
  SLICE = 23,
  STRING = 24;

export interface Seen {
  value: string;
  match?: boolean;
  note?: string;
}

function text(v: DlvVariable): string {
  if (v.kind === SLICE) return `[${v.children.map(text).join(',')}]`;
  if (v.kind === PTR) return v.children[0] ? text(v.children[0]) : 'nil';
  return v.value;
}

export function compare(v: DlvVariable, flagValue: string): Seen {
  if (v.unreadable) return { value: '', note: `delve could not read it: ${v.unreadable}` };
  const target = v.kind === PTR && v.children[0] ? v.children[0] : v;
  const value = text(v);
  const k = target.kind;
  if (k === STRING) return { value, match: target.value === flagValue };
  if (k === BOOL) return { value, match: target.value === flagValue };
  if (k >= INT_FIRST && k <= UINT_LAST) {
    if (target.type === 'time.Duration') {
      const ns = durationNs(flagValue);
      return ns === undefined
        ? { value, note: 'duration not parsed' }
        : { value, match: Number(target.value) === ns };
    }
    return {
      value,
      match: /^-?\d+$/.test(flagValue) ? Number(target.value) === Number(flagValue) : undefined,
    };
  }
  if (k >= FLOAT_FIRST && k <= FLOAT_LAST)
    return { value, match: Number(target.value) === Number(flagValue) };
  // net.IP: 16 bytes, an IPv4 address in its v4-mapped form (::ffff:a.b.c.d).
  if (
    target.type === 'net.IP' &&
    target.children.length === 16 &&
    target.children
      .slice(0, 12)
      .map((c) => c.value)
      .join(',') === '0,0,0,0,0,0,0,0,0,0,255,255'
  ) {
    const ip = target.children
      .slice(12)
      .map((c) => c.value)
      .join('.');
    return { value: ip, match: ip === flagValue };
  }
  if (k === SLICE && target.children.every((c) => c.kind === STRING)) {
    return { value, match: target.children.map((c) => c.value).join(',') === flagValue };
  }
  return { value: value || target.type, note: `a ${target.type}: not compared` };
}
