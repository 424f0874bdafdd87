// Go's time.ParseDuration for the forms units and config files use (10s, 1m30s, 500ms, 4h0m0s).
const UNITS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** The duration in nanoseconds, or undefined when `s` is not one. */
export function goDurationNs(s: string): number | undefined {
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(s)) return undefined;
  let total = 0;
  for (const m of s.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g))
    total += Number(m[1]) * UNITS[m[2]!]!;
  return total;
}
