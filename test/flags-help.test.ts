// The flag map's flag set against the binary itself: each Kubernetes binary built here prints its
// flags with --help, and the map must list exactly those (its hidden ones aside, which --help
// leaves out). This is read independently of the analyzer and of the flag-set dumps it trusts
// (cmd/k8sflags, node/cmd/nodeflags, node/cmd/proxyflags): a dump built with other imports, or
// without the binary's name normalizer, shows here as a name the binary lacks or prints otherwise.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { binaryPath } from '../core/components/binaries/cache.ts';
import { flagVersions, loadFlagMap } from '../core/flags/map.ts';

const COMPONENTS = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubelet',
  'kube-proxy',
] as const;

/**
 * The long flag names a --help prints, one per option line ("  -v, --v Level   ...", "      --config string ...").
 * cobra adds -h/--help itself when a command runs (cobra command.go InitDefaultHelpFlag); kube-proxy's is that one.
 */
function helpFlags(bin: string): string[] {
  let out: string;
  try {
    out = execFileSync(bin, ['--help'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
  } catch (err) {
    // Some print help and exit non-zero; what they printed is still the flag set.
    const e = err as { stdout?: string; stderr?: string };
    out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
  }
  const names = new Set<string>();
  for (const line of out.split('\n')) {
    const m = /^\s+(?:-[A-Za-z], )?--([a-z0-9][a-z0-9_-]*)/.exec(line);
    if (m) names.add(m[1]!);
  }
  return [...names].sort();
}

describe('the flag map lists the flags each built binary prints', () => {
  for (const version of flagVersions()) {
    for (const c of COMPONENTS) {
      it(`${c} ${version}`, () => {
        const bin = binaryPath(c, version);
        expect(existsSync(bin), `${bin} is not built: scripts/setup.sh test builds it`).toBe(true);
        const printed = helpFlags(bin);
        expect(printed.length, `${c} --help printed no flags`).toBeGreaterThan(20);
        const mapped = loadFlagMap(c, version)
          .flags.filter((f) => !f.hidden)
          .map((f) => f.name);
        const cobraHelp = c === 'kube-proxy' ? ['help'] : [];
        expect(mapped.sort(), `${c} ${version}: the map's visible flags`).toEqual(
          printed.filter((n) => !cobraHelp.includes(n)),
        );
        // Every flag has its registration cited.
        expect(
          loadFlagMap(c, version)
            .flags.filter((f) => !f.registeredAt)
            .map((f) => f.name),
          `${c} ${version}: flags with no registration`,
        ).toEqual([]);
      });
    }
  }
});
