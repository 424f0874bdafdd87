// A flag value checked the way the component's Go flag parser will read it, by the type the flag map
// records for that flag (flags/data/<version>/<component>.json). A value the parser refuses stops the
// component at start on the host; checked here, it is one line naming the inventory field instead.
//
// The parsers (module versions as pinned by k8s.io/kubernetes@v1.36.3 go.mod and etcd v3.6.8):
//   github.com/spf13/pflag@v1.0.9  bool.go:21 strconv.ParseBool; int.go:14 ParseInt(s, 0, 64);
//     int32.go:14 ParseInt(s, 0, 32); int64.go:14 ParseInt(s, 0, 64); uint.go:14 ParseUint(s, 0, 64);
//     float32.go:14 ParseFloat(s, 32); float64.go:14 ParseFloat(s, 64); duration.go:16 time.ParseDuration;
//     ip.go:22 net.ParseIP(strings.TrimSpace(s))
//   Go's flag package (etcd's embed/config.go registers on it): flag.go:134/164/185/206/227/265/286,
//     the same strconv and time parsers
//   etcd pkg/flags/uint32.go: ParseUint(s, 0, 32)
//   k8s.io/component-base@v0.36.3 logs/api/v1/pflags.go:101-103 (-v): ParseUint(value, 10, 31)
import { isIP } from 'node:net';

const GO_BOOL = new Set([
  '1',
  't',
  'T',
  'TRUE',
  'true',
  'True',
  '0',
  'f',
  'F',
  'FALSE',
  'false',
  'False',
]);

/** strconv.ParseInt/ParseUint with base 0: Go integer literal syntax (0x, 0o, 0b, leading-0 octal, "_" between digits). */
function goInt(s: string, signed: boolean): bigint | undefined {
  const m = /^([+-]?)(.*)$/.exec(s)!;
  const [, sign, body] = m as unknown as [string, string, string];
  if (sign && !signed) return undefined;
  let digits: string;
  if (/^0[xX](_?[0-9a-fA-F])+$/.test(body)) digits = `0x${body.slice(2)}`;
  else if (/^0[bB](_?[01])+$/.test(body)) digits = `0b${body.slice(2)}`;
  else if (/^0[oO](_?[0-7])+$/.test(body)) digits = `0o${body.slice(2)}`;
  else if (/^0(_?[0-7])+$/.test(body)) digits = `0o${body.slice(1)}`;
  else if (/^(0|[1-9](_?[0-9])*)$/.test(body)) digits = body;
  else return undefined;
  const v = BigInt(digits.replaceAll('_', ''));
  return sign === '-' ? -v : v;
}

function inRange(v: bigint | undefined, bits: number, signed: boolean): boolean {
  if (v === undefined) return false;
  const lo = signed ? -(2n ** BigInt(bits - 1)) : 0n;
  const hi = signed ? 2n ** BigInt(bits - 1) - 1n : 2n ** BigInt(bits) - 1n;
  return v >= lo && v <= hi;
}

/** time.ParseDuration: "0", or a sequence of decimal numbers each with a unit, optionally signed. */
const GO_DURATION = /^[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+)$/;
const GO_FLOAT = /^[+-]?((\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|inf|infinity|nan)$/i;
const FLOAT32_MAX = 3.4028234663852886e38;

type Check = (v: string) => boolean;

const CHECKS: Record<string, { check: Check; expect: string }> = {
  bool: { check: (v) => GO_BOOL.has(v), expect: 'true or false' },
  int: { check: (v) => inRange(goInt(v, true), 64, true), expect: 'a whole number' },
  int64: { check: (v) => inRange(goInt(v, true), 64, true), expect: 'a whole number' },
  int32: {
    check: (v) => inRange(goInt(v, true), 32, true),
    expect: `a whole number from ${-(2 ** 31)} to ${2 ** 31 - 1}`,
  },
  uint: { check: (v) => inRange(goInt(v, false), 64, false), expect: 'a whole number, 0 or more' },
  uint64: {
    check: (v) => inRange(goInt(v, false), 64, false),
    expect: 'a whole number, 0 or more',
  },
  '*flags.uint32Value': {
    check: (v) => inRange(goInt(v, false), 32, false),
    expect: `a whole number from 0 to ${2 ** 32 - 1}`,
  },
  Level: {
    check: (v) => /^\d+$/.test(v) && BigInt(v) < 2n ** 31n,
    expect: 'a log verbosity: a whole number such as 2',
  },
  float64: { check: (v) => GO_FLOAT.test(v), expect: 'a number' },
  float32: {
    check: (v) =>
      GO_FLOAT.test(v) && !(Math.abs(Number(v)) > FLOAT32_MAX && Number.isFinite(Number(v))),
    expect: 'a number',
  },
  duration: {
    check: (v) => GO_DURATION.test(v),
    expect: 'a Go duration with a unit, such as 40s or 1m30s',
  },
  ip: { check: (v) => isIP(v.trim()) !== 0, expect: 'an IP address' },
};

/** Why the component would refuse `value` for a flag of this type, or undefined if it parses. */
export function flagValueProblem(type: string, value: string): string | undefined {
  const c = CHECKS[type];
  if (!c || c.check(value)) return undefined;
  return `"${value}" is not ${c.expect} (the flag is of type ${type})`;
}
