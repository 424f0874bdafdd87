// `hardwire learn`'s data, without a cluster: every cited source line re-opened here (not through
// verifyCites), the citation at another running version, the bash the commands run in, and the ids.
import { describe, expect, it } from 'vitest';
import { EXERCISES, exercise } from '../harness/learn/index.ts';
import { citeAt, verifyCites } from '../harness/learn/cites.ts';
import { script, splitTyped } from '../harness/learn/env.ts';
import { InputError } from '../lib/errors.ts';
import { run } from '../lib/proc.ts';
import { reopenSite } from './helpers/modcache.ts';

describe('learn: the exercises as data', () => {
  it('every cited line holds its text at the version it names', () => {
    const cites = EXERCISES.flatMap((e) => e.cites);
    expect(cites.length).toBeGreaterThan(15);
    for (const c of cites) expect(reopenSite(c.site), JSON.stringify(c.site)).toContain(c.holds);
    expect(verifyCites(EXERCISES)).toEqual([]);
  });

  it('a citation one line off is a failure that says where the text is', () => {
    const e = exercise('2.1');
    const moved = {
      ...e,
      cites: e.cites.map((c) => ({ ...c, site: { ...c.site, line: c.site.line + 1 } })),
    };
    const f = verifyCites([moved]);
    expect(f).toHaveLength(e.cites.length);
    expect(f[0]!.reason).toMatch(/it is at: 917/);
  });

  it("at another running version, the line is found again in that version's source", () => {
    const c = exercise('2.1').cites[0]!;
    const at = citeAt(c, 'v1.37.2');
    expect(at.note).toBeUndefined();
    const m = /^(k8s\.io\/apiserver)@(v0\.37\.2)\/(.+):(\d+)$/.exec(at.ref);
    expect(m, at.ref).not.toBeNull();
    expect(
      reopenSite({ module: m![1]!, version: m![2]!, file: m![3]!, line: Number(m![4]) }),
    ).toContain(c.holds);
    // v1.37 moved the watch cache's history out of watch_cache.go: found in its package.
    expect(at.ref).toBe('k8s.io/apiserver@v0.37.2/pkg/storage/cacher/watch_cache_history.go:237');
    expect(citeAt(c, 'v1.99.0').note).toMatch(/cluster runs v1\.99\.0/);
  });

  it('ids are unique, and an unknown one is one line naming ID', () => {
    const ids = EXERCISES.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(() => exercise('9.9')).toThrow(InputError);
    expect(() => exercise('9.9')).toThrow(/^ID: no exercise "9\.9"/);
    for (const e of EXERCISES) {
      expect(e.commands.length, e.id).toBeGreaterThan(0);
      expect(e.watch.length, e.id).toBeGreaterThan(0);
    }
  });

  it('the lines run in one bash, each with its own output and exit code, a heredoc and a job included', async () => {
    const lines = ['X=1; echo one', 'false', "cat <<'EOF'\n$X stays\nEOF", 'sleep 30 &', 'echo $X'];
    const r = await run('bash', ['--noprofile', '--norc'], {
      step: 'test',
      input: `exec 2>&1\n${script(lines)}kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; exit 0\n`,
      allowFail: true,
      timeoutMs: 10_000,
    });
    const t = splitTyped(lines, r.stdout);
    expect(t.map((x) => [x.output, x.code])).toEqual([
      ['one', 0],
      ['', 1],
      ['$X stays', 0],
      ['', 0],
      ['1', 0],
    ]);
  });
});
