// A cited site that the unit's own flags rule out (harness/prove/decide.ts): `off`, not `not hit`,
// when its condition (the flag map's, from the analyzer's cond.go) needs a flag the unit does not
// pass, or a comparison the unit's value makes false; a hit there anyway is a contradiction. The
// conditions are kube-apiserver v1.36.3's, from the committed map, and each is first read back from
// the module cache here: its lines are the map's text, and its operands are in the source.
import { describe, expect, it } from 'vitest';
import { classify } from '../harness/prove/classify.ts';
import { sourceLines } from '../harness/prove/source.ts';
import { evaluate } from '../harness/prove/expr.ts';
import { loadFlagMap, siteRef, type ReadSite } from '../core/flags/map.ts';
import type { FlagPlan } from '../harness/prove/sites.ts';
import type { SiteTrace } from '../harness/prove/trace.ts';

const map = loadFlagMap('kube-apiserver', 'v1.36.3');
const defaults = new Map(map.flags.map((f) => [f.name, f.default]));

/** The map's site for `flag` at file:line, its condition checked against the module cache. */
function site(flag: string, fileLine: string): ReadSite {
  const s = map.flags
    .find((f) => f.name === flag)!
    .consumedAt.find((c) => `${c.file}:${c.line}` === fileLine)!;
  expect(s?.condition, `${flag} ${fileLine}`).toBeDefined();
  const [, mod, ver, file, line] = /^(.+?)@(v[^/]+)\/(.+):(\d+)$/.exec(s.condition!.at)!;
  const src = sourceLines(mod!, ver!, file!)!;
  const n = Number(line);
  const lines = src.slice(n - 1, n - 1 + 6).map((l) => l.trim());
  // The text is the condition's lines, and the expression prove decides is in them, operand by operand.
  expect(lines.join(' ').startsWith(s.condition!.text), s.condition!.at).toBe(true);
  for (const operand of s.condition!.expr!.split(/ && | \|\| /))
    expect(s.condition!.text, operand).toContain(operand.replace(/^!/, ''));
  for (const subject of Object.keys(s.condition!.tests!))
    expect(s.condition!.text).toContain(subject);
  return s;
}

/** classify on one flag's one site, traced with `hits` hits, with `argv` passed besides. */
function run(flag: string, s: ReadSite, argv: string[], hits = 0) {
  const value = argv.find((a) => a.startsWith(`--${flag}=`))?.split('=')[1] ?? '/x';
  const plan: FlagPlan = {
    flag: { name: flag, value },
    entry: map.flags.find((f) => f.name === flag)!,
    sites: [
      { flag, index: 0, site: s, file: `${s.module}@${s.version}/${s.file}`, ref: siteRef(s) },
    ],
  };
  const others: FlagPlan[] = argv
    .filter((a) => !a.startsWith(`--${flag}=`))
    .map((a) => ({
      flag: { name: a.slice(2, a.indexOf('=')), value: a.slice(a.indexOf('=') + 1) },
      sites: [],
    }));
  const t: SiteTrace = {
    site: plan.sites[0]!,
    hits,
    capped: false,
    values: [],
    ...(hits
      ? {
          first: {
            file: plan.sites[0]!.file,
            line: s.line,
            function: `k8s.io/kubernetes/x.${s.function}`,
            goroutine: 1,
          },
        }
      : {}),
  };
  return classify([plan, ...others], [t], (f) => defaults.get(f))[0]!;
}

describe("prove: sites the unit's own flags rule out", () => {
  it("a comparison the unit's value makes false: audit.go:514 behind `o.MaxSize == 0`, with --audit-log-maxsize=100", () => {
    const s = site('audit-log-path', 'pkg/server/options/audit.go:514');
    const r = run('audit-log-path', s, ['--audit-log-maxsize=100']);
    expect(r.sites[0]!.status).toBe('off');
    expect(r.sites[0]!.reason).toBe(
      "ruled out by the unit's flags: pkg/server/options/audit.go:513 `if o.MaxSize == 0 {` is false, since the unit passes --audit-log-maxsize=100",
    );
    expect(r.verdict).toBe('not hit');
    expect(r.reason).toBe(r.sites[0]!.reason);
    // With --audit-log-maxsize=0 the branch runs: a plain miss, explained by its condition.
    expect(run('audit-log-path', s, ['--audit-log-maxsize=0']).sites[0]!.status).toBe('not hit');
  });

  it('one operand of a four-operand && over four lines: authentication.go:312 needs --requestheader-allowed-names empty', () => {
    const s = site('client-ca-file', 'pkg/kubeapiserver/options/authentication.go:312');
    expect(s.condition!.tests!['o.RequestHeader.AllowedNames']).toEqual([
      'requestheader-allowed-names',
    ]);
    const unit = ['--client-ca-file=/ca.crt', '--requestheader-client-ca-file=/front.crt'];
    const off = run('client-ca-file', s, [
      ...unit,
      '--requestheader-allowed-names=front-proxy-client',
    ]);
    expect(off.sites[0]!.status).toBe('off');
    // Named: the operand that makes the && false, not those that hold.
    expect(off.sites[0]!.reason).toMatch(
      / `if o\.ClientCert != nil && len\(o\.ClientCert\.ClientCA\) > 0 && len\(o\.RequestHeader\.ClientCAFile\) > 0 && len\(o\.RequestHeader\.AllowedNames\) == 0 \{` is false, since the unit passes --requestheader-allowed-names=front-proxy-client$/,
    );
    // Without it, `o.ClientCert != nil` (a field set by code) leaves the condition open.
    expect(run('client-ca-file', s, unit).sites[0]!.status).toBe('not hit');
  });

  it('a condition that needs a flag the unit does not pass: config.go:330 behind --peer-ca-file; not when the unit passes it', () => {
    const s = site('proxy-client-cert-file', 'pkg/controlplane/apiserver/config.go:330');
    const off = run('proxy-client-cert-file', s, []);
    expect(off.sites[0]!.status).toBe('off');
    expect(off.sites[0]!.reason).toBe(
      'ruled out by the unit\'s flags: pkg/controlplane/apiserver/config.go:325 `if opts.PeerCAFile != "" {` needs --peer-ca-file set, and the unit does not pass it',
    );
    expect(run('proxy-client-cert-file', s, ['--peer-ca-file=/peer.crt']).sites[0]!.status).toBe(
      'not hit',
    );
  });

  it('past an early return (negated): validation.go:99 runs only with --service-account-signing-endpoint set', () => {
    const s = site(
      'service-account-signing-key-file',
      'pkg/controlplane/apiserver/options/validation.go:99',
    );
    expect(s.condition!.negated).toBe(true);
    expect(run('service-account-signing-key-file', s, []).sites[0]!.status).toBe('off');
    // Passed: `len(…) == 0` is false, and the read runs when it is false.
    expect(
      run('service-account-signing-key-file', s, ['--service-account-signing-endpoint=@socket'])
        .sites[0]!.status,
    ).toBe('not hit');
  });

  it('a hit there anyway stays a hit, and says it contradicts the decision', () => {
    const s = site('audit-log-path', 'pkg/server/options/audit.go:514');
    const r = run('audit-log-path', s, ['--audit-log-maxsize=100'], 1);
    expect(r.sites[0]!.status).toBe('hit');
    expect(r.sites[0]!.ruledOut).toMatch(/^ruled out by the unit's flags: /);
    expect(r.sites[0]!.reason).toMatch(/^CONTRADICTION: hit, though ruled out/);
    expect(r.sites[0]!.contradiction).toBe(true);
  });

  it('a hit at a line that holds the condition too (the read in the right operand of its &&) is no contradiction', () => {
    const s = site(
      'service-account-signing-key-file',
      'pkg/controlplane/apiserver/options/options.go:307',
    );
    expect(s.condition!.at.endsWith('/options.go:307')).toBe(true);
    const r = run('service-account-signing-key-file', s, [], 1);
    expect(r.sites[0]!.status).toBe('hit');
    expect(r.sites[0]!.contradiction).toBeUndefined();
    expect(r.sites[0]!.reason).toMatch(
      /^hit at the line, which also holds its condition .*; the read itself is ruled out by the unit's flags: /,
    );
  });

  it('not decided: a condition without an expression (callers under different conditions), or with a config file passed', () => {
    const s = site('audit-log-path', 'pkg/server/options/audit.go:514');
    const { expr: _, ...open } = s.condition!;
    expect(
      run('audit-log-path', { ...s, condition: open }, ['--audit-log-maxsize=100']).sites[0]!
        .status,
    ).toBe('not hit');
    const peer = site('proxy-client-cert-file', 'pkg/controlplane/apiserver/config.go:330');
    expect(run('proxy-client-cert-file', peer, ['--config=/etc/x.yaml']).sites[0]!.status).toBe(
      'not hit',
    );
  });

  it('three-valued: && is false on one false operand, || only when all are, ! and parentheses', () => {
    const known: Record<string, boolean> = { a: true, b: false };
    const leaf = (x: string) => known[x];
    expect([
      evaluate('a && b && c', leaf),
      evaluate('c && a', leaf),
      evaluate('b || c', leaf),
      evaluate('b || !(a)', leaf),
      evaluate('!(a && b)', leaf),
      evaluate('(b || b) && c', leaf),
    ]).toEqual([false, undefined, undefined, false, true, false]);
  });
});
