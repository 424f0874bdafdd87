// The pause binary: C, not Go. Compiled statically from build/pause/linux/pause.c of the
// k8s.io/kubernetes module (the module proxy's zip of the release tag, already in the module cache
// after the Kubernetes build), with the flags of build/pause/Makefile (CFLAGS).
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StepError } from '../../../lib/errors.ts';
import { repoRoot } from '../../../lib/paths.ts';
import { run } from '../../../lib/proc.ts';
import { goEnv } from './go-env.ts';
import type { VersionSet } from './catalog.ts';
import { TRIPLET, localArch, type Arch } from '../../../lib/arch.ts';

export interface PausePlan {
  version: string;
  source: string;
  moduleDir: string;
  flags: string[];
  /** The C compiler: cc for this machine, Debian's cross compiler (gcc-<triplet>) for another architecture. */
  cc: string;
}

/** Where k8s.io/kubernetes@<version> is unpacked in the module cache (downloaded if missing). */
export async function kubernetesModuleDir(version: string): Promise<string> {
  const res = await run('go', ['mod', 'download', '-json', `k8s.io/kubernetes@${version}`], {
    step: `download k8s.io/kubernetes ${version}`,
    cwd: join(repoRoot, 'core', 'components', 'go', 'kubernetes-node'),
    env: goEnv(),
    hint: 'install Go 1.26',
  });
  const dir = (JSON.parse(res.stdout) as { Dir?: string }).Dir;
  if (!dir)
    throw new StepError(
      `download k8s.io/kubernetes ${version}`,
      `go mod download gave no directory: ${res.stdout.slice(0, 200)}`,
    );
  return dir;
}

/**
 * build/pause/Makefile: `CFLAGS = -Os -Wall -Werror -static -DVERSION=v$(TAG)-$(REV)`. REV is
 * `git describe` of a Kubernetes checkout, which a module zip does not have; VERSION is the TAG
 * alone, so `pause -v` prints "pause.c v3.10.2". The Makefile's TAG must be the pinned version.
 */
export async function planPause(
  versions: VersionSet,
  arch: Arch = localArch(),
): Promise<PausePlan> {
  const moduleDir = await kubernetesModuleDir(versions.kubernetes);
  const makefile = await readFile(join(moduleDir, 'build', 'pause', 'Makefile'), 'utf8');
  const tag = /^TAG \?= (\S+)$/m.exec(makefile)?.[1];
  if (`v${tag}` !== versions.pause) {
    throw new StepError(
      `build pause ${versions.pause}`,
      `k8s.io/kubernetes ${versions.kubernetes} has pause ${tag} (build/pause/Makefile TAG), not ${versions.pause}; fix the version table`,
    );
  }
  return {
    version: versions.pause,
    source: join(moduleDir, 'build', 'pause', 'linux', 'pause.c'),
    moduleDir,
    flags: ['-Os', '-Wall', '-Werror', '-static', `-DVERSION=${versions.pause}`],
    cc: arch === localArch() ? 'cc' : `${TRIPLET[arch]}-gcc`,
  };
}

const ccVersions = new Map<string, Promise<string>>();
function ccVersion(cc: string): Promise<string> {
  let v = ccVersions.get(cc);
  if (!v) {
    v = run(cc, ['--version'], {
      step: `${cc} version`,
      hint: `install ${cc === 'cc' ? 'gcc (apt-get install -y gcc libc6-dev)' : `the cross compiler (apt-get install -y gcc-${cc.replace(/-gcc$/, '')})`}`,
    }).then((r) => r.stdout.split('\n')[0]!.trim());
    ccVersions.set(cc, v);
  }
  return v;
}

/** Hash of what decides the binary: the compiler, the flags, the source. */
export async function pauseRecipe(plan: PausePlan): Promise<string> {
  return createHash('sha256')
    .update(JSON.stringify({ cc: await ccVersion(plan.cc), flags: plan.flags }))
    .update(await readFile(plan.source))
    .digest('hex');
}

/** Compiles pause into outDir/pause. */
export async function ccBuildPause(plan: PausePlan, outDir: string): Promise<string> {
  const out = join(outDir, 'pause');
  await run(plan.cc, [...plan.flags, '-o', out, plan.source], {
    step: `build pause ${plan.version}`,
    hint: `install ${plan.cc === 'cc' ? 'gcc' : `gcc-${plan.cc.replace(/-gcc$/, '')}`} and its static libc`,
    tailOf: 'all',
  });
  return out;
}
