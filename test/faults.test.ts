// The fault suite, on a real wired 3-host lab: malformed inventories never reach a host, wire
// killed mid-push leaves no half-written file, a host powered off mid-roll stops the roll while the
// rest keeps serving, and SSH auth failure vs changed host key are distinct errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { parse, stringify } from 'yaml';
import { generateEd25519 } from '../core/transport/keygen.ts';
import { hardwire } from './helpers/cli.ts';
import { hardwireAsync, inBatches } from './helpers/cli-async.ts';
import { testLab, remote, type TestLab } from './helpers/lab.ts';
import type { Session } from '../core/transport/index.ts';
import { writeBadInventories } from './fixtures/bad-inventories.ts';
import { labStart, labStop } from '../harness/lab/index.ts';
import { repoRoot } from '../lib/paths.ts';
import { loadInventory } from '../core/inventory/load.ts';
import { checkEtcd, etcdctlArgv } from '../core/gates/etcd.ts';
import { binaryPath } from '../core/components/binaries/cache.ts';

let lab: TestLab;
let inv: string;
let state: string;

function variant(file: string, fn: (d: Record<string, any>) => void): string {
  // eslint-disable-line @typescript-eslint/no-explicit-any
  const d = parse(readFileSync(inv, 'utf8')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  fn(d);
  const out = join(lab.stateDir, file);
  writeFileSync(out, stringify(d));
  return out;
}

/**
 * Until every unit a plan names has been active for 20 s on its host, read there (systemctl show,
 * /proc/uptime): kube-vip exits by design when its host's apiserver restarts under it (its lease
 * renewal fails) and systemd starts it again, so right after a roll it may be "activating" for a
 * few seconds. At most 120 s; then the states read are the error.
 */
async function unitsSettled(plan: { hosts: { host: string; units: { component: string }[] }[] }) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const unsettled: string[] = [];
    for (const h of plan.hosts) {
      const s = await lab.ssh(h.host);
      try {
        const units = h.units.map((u) => `${u.component}.service`);
        const out = await remote(s, [
          'sh',
          '-c',
          `cut -d' ' -f1 /proc/uptime; systemctl show -p Id -p ActiveState -p ActiveEnterTimestampMonotonic ${units.join(' ')}`,
        ]);
        const [uptime, ...rest] = out.split('\n');
        const nowUs = Number(uptime) * 1e6;
        for (const block of rest.join('\n').split(/\n\s*\n/)) {
          const p = Object.fromEntries(
            block.split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
          );
          const since = nowUs - Number(p.ActiveEnterTimestampMonotonic);
          if (p.ActiveState !== 'active' || !(since >= 20e6))
            unsettled.push(`${h.host} ${p.Id} ${p.ActiveState} ${Math.round(since / 1e6)} s`);
        }
      } finally {
        await s.close();
      }
    }
    if (unsettled.length === 0) return;
    if (Date.now() > deadline) throw new Error(`units not settled: ${unsettled.join('; ')}`);
    await new Promise((r) => setTimeout(r, 2000));
  }
}

function wireOk(inventory: string): {
  restarted: unknown[];
  plan: { noop: boolean; hosts: { host: string; units: { component: string }[] }[] };
} {
  const r = hardwire(['wire', '--inventory', inventory, '--state-dir', state, '--json'], {
    timeoutMs: 600_000,
  });
  expect(r.code, r.stderr.slice(-3000)).toBe(0);
  return JSON.parse(r.stdout);
}

/** Runs wire and calls onLine for each stderr chunk; resolves with exit code and stderr. */
function wireWatching(
  inventory: string,
  onOutput: (stderr: string, kill: () => void) => void,
  extra: string[] = [],
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, 'cli', 'hardwire.ts'),
      'wire',
      '--inventory',
      inventory,
      '--state-dir',
      state,
      ...extra,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    onOutput(stderr, () => child.kill('SIGKILL'));
  });
  return new Promise((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stderr })),
  );
}

/**
 * What the last run rendered for each host, from the host trees it wrote under the state dir
 * (.hardwire/<cluster>/hosts/<host>/...): host -> path on the host -> sha256 of the content.
 */
function renderedTrees(): Map<string, Map<string, string>> {
  const cluster = (parse(readFileSync(inv, 'utf8')) as { cluster: { name: string } }).cluster.name;
  const out = new Map<string, Map<string, string>>();
  for (const h of lab.info.hosts) {
    const dir = join(state, cluster, 'hosts', h.name);
    const files = new Map<string, string>();
    for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!e.isFile()) continue;
      const p = join(e.parentPath, e.name);
      files.set(`/${relative(dir, p)}`, createHash('sha256').update(readFileSync(p)).digest('hex'));
    }
    out.set(h.name, files);
  }
  return out;
}

interface OnHost {
  sha256: string | null;
  ctimeMs: number | null;
}

/** sha256 and ctime of each path as the host has it, read with sha256sum and find, not with hardwire's code. */
async function readOnHost(s: Session, paths: string[]): Promise<Map<string, OnHost>> {
  const sums = new Map(
    (await remote(s, ['sha256sum', '--', ...paths]))
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(66), l.slice(0, 64)] as const),
  );
  const ctimes = new Map(
    (await remote(s, ['find', ...paths, '-maxdepth', '0', '-printf', '%C@ %p\\n']))
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const sp = l.indexOf(' ');
        return [l.slice(sp + 1), Number(l.slice(0, sp)) * 1000] as const;
      }),
  );
  return new Map(
    paths.map((p) => [p, { sha256: sums.get(p) ?? null, ctimeMs: ctimes.get(p) ?? null }]),
  );
}

/** Partial files a push leaves beside its targets when it dies (the tar batch's "<path>.hardwire-new", the single write's ".hardwire.*"). */
async function strayTemps(s: Session, paths: string[]): Promise<string[]> {
  const dirs = [...new Set(paths.map((p) => dirname(p)))];
  return (
    await remote(s, [
      'find',
      ...dirs,
      '-maxdepth',
      '1',
      '(',
      '-name',
      '*.hardwire-new',
      '-o',
      '-name',
      '.hardwire.*',
      ')',
      '-printf',
      '%p (%s bytes)\\n',
    ])
  )
    .split('\n')
    .filter(Boolean);
}

/** wire as a child process that the caller kills. */
function startWire(inventory: string): {
  kill: () => void;
  done: Promise<{ code: number | null; signal: string | null; stderr: string }>;
} {
  const child = spawn(
    process.execPath,
    [join(repoRoot, 'cli', 'hardwire.ts'), 'wire', '--inventory', inventory, '--state-dir', state],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return {
    kill: () => child.kill('SIGKILL'),
    done: new Promise((res) => child.on('close', (code, signal) => res({ code, signal, stderr }))),
  };
}

/**
 * On the host: waits until one of `paths` has a ctime newer than the mtime of `ref` (a file there was
 * written or renamed into place), prints it and exits 0; exits 1 when `ref`.stop appears or after ~4 min.
 */
const FIRST_WRITE_WATCH = `ref=$1; shift; n=0
while [ $n -lt 6000 ] && [ ! -e "$ref.stop" ]; do
  f=$(find "$@" -maxdepth 0 -cnewer "$ref" 2>/dev/null | head -n 1)
  if [ -n "$f" ]; then echo "$f"; exit 0; fi
  n=$((n + 1)); sleep 0.02
done
exit 1`;

/** Successful SSH logins per host, from sshd's own journal (this reading's login included). */
async function sshdLogins(): Promise<number[]> {
  const out: number[] = [];
  for (const h of lab.info.hosts) {
    const s = await lab.ssh(h.name);
    const r = await s.exec(
      ['journalctl', '-u', 'ssh.service', '--no-pager', '-o', 'cat', '--grep', '^Accepted '],
      { allowFail: true },
    );
    out.push(r.stdout.split('\n').filter((l) => l.startsWith('Accepted ')).length);
    await s.close();
  }
  return out;
}

beforeAll(async () => {
  lab = await testLab('faulttest', 3);
  inv = lab.info.inventory;
  state = join(lab.stateDir, 'state');
  wireOk(inv);
});

afterAll(async () => {
  await lab?.down();
});

describe('fault suite', () => {
  it('rejects 40+ malformed inventories with exit 2, one line naming the field, and no SSH connection', async () => {
    const fixtures = writeBadInventories(join(lab.stateDir, 'bad'), readFileSync(inv, 'utf8'));
    expect(fixtures.length).toBeGreaterThanOrEqual(30);
    const before = await sshdLogins();
    // Four at a time: each run is a Node start and a validation, and one at a time took 108-120 s
    // beside two other lab lanes.
    const results = await inBatches(fixtures, 4, (f) =>
      hardwireAsync(['wire', '--inventory', f.file, '--state-dir', state]),
    );
    for (const [i, { fx, field }] of fixtures.entries()) {
      const r = results[i]!;
      expect(r.code, fx.name).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines, fx.name).toHaveLength(1);
      // The whole field, then ': ' (a prefix alone would let `hosts` pass for `hosts[0].ssh`, and '' for anything).
      expect(field, fx.name).not.toBe('');
      expect(
        lines[0]!.startsWith(`error: ${field}: `),
        `${fx.name}: ${lines[0]} does not name ${field}`,
      ).toBe(true);
    }
    // The only new login on each host is this second reading's own.
    const after = await sshdLogins();
    expect(
      after.map((n, i) => n - before[i]!),
      'sshd saw logins during the malformed runs',
    ).toEqual([1, 1, 1]);
  }, 600_000);

  it('wire killed mid-push leaves every file old or new, and the next wire converges', async () => {
    const a = inv;
    const b = variant('inv-b.yaml', (d) => {
      d.cluster.extraSANs = ['api.faulttest.example'];
      d.cluster.extraArgs = {
        'kube-scheduler': { v: '2' },
        'kube-controller-manager': { v: '2' },
        etcd: { 'log-level': 'info' },
      };
    });
    // Each switch reissues apiserver.crt/.key (new key and serial) and rewrites three units on every
    // host. node3 also gets a foreign kube-scheduler binary before each round, so its push streams
    // ~70 MB before its files while node1 and node2 write theirs at once: the run's writes are
    // spread out, and a binary transfer is among the things killed.
    const bin = '/usr/local/bin/kube-scheduler';
    // The version this inventory wires: the cache holds others too (the upgrade's v1.37.2).
    const cached = binaryPath('kube-scheduler', loadInventory(inv).cluster.kubernetesVersion);
    const binSha = createHash('sha256').update(readFileSync(cached)).digest('hex'); // this run's own input
    const n1 = await lab.ssh('node1');
    expect(
      (await remote(n1, ['sha256sum', bin])).slice(0, 64),
      'node1 runs another kube-scheduler than the cache holds',
    ).toBe(binSha);
    const n3 = await lab.ssh('node3');
    const targets = [b, a, b, a, b, a];
    let kills = 0;
    let midPush = 0;
    for (const [round, target] of targets.entries()) {
      await n3.exec([
        'sh',
        '-c',
        `cp -p ${bin} ${bin}.test && printf '%s' ${round} >> ${bin}.test && mv ${bin}.test ${bin}`,
      ]);
      const paths = new Map(
        [...renderedTrees()].map(([h, files]) => [
          h,
          [...files.keys(), ...(h === 'node3' ? [bin] : [])],
        ]),
      );
      const before = new Map<string, Map<string, OnHost>>();
      for (const h of lab.info.hosts) {
        const s = await lab.ssh(h.name);
        before.set(h.name, await readOnHost(s, paths.get(h.name)!));
        await s.close();
      }
      // The trigger is node1's own filesystem: the first of its files whose ctime moves after ref.
      const ref = '/run/hardwire-test-round';
      await n1.exec(['sh', '-c', `rm -f ${ref}.stop; touch ${ref}`]);
      const watcher = n1.exec(['sh', '-c', FIRST_WRITE_WATCH, 'sh', ref, ...paths.get('node1')!], {
        timeoutMs: 300_000,
        allowFail: true,
      });
      const run = startWire(target);
      const seen = await Promise.race([watcher, run.done.then(() => null)]);
      const seenAt = Date.now();
      const delay = Math.floor(Math.random() * 400);
      if (seen?.code === 0) setTimeout(run.kill, delay);
      const r = await run.done;
      await n1.exec(['touch', `${ref}.stop`]);
      await watcher;
      expect(
        seen?.code,
        `round ${round}: node1 saw no write before wire ended:\n${r.stderr.slice(-2000)}`,
      ).toBe(0);
      await new Promise((res) => setTimeout(res, 1500)); // a batch already unpacked on a host still renames
      // This run's own render; the guard proves it is this run's (b sets --v=2 on the scheduler).
      const rendered = renderedTrees();
      const unit = readFileSync(
        join(
          state,
          loadInventory(target).cluster.name,
          'hosts',
          'node1',
          'etc/systemd/system/kube-scheduler.service',
        ),
        'utf8',
      );
      expect(
        /^ {2}--v=2/m.test(unit),
        `round ${round}: the state dir holds another run's render`,
      ).toBe(target === b);
      let toMove = 0;
      const moved: number[] = [];
      const perHost: string[] = [];
      for (const h of lab.info.hosts) {
        const s = await lab.ssh(h.name);
        const now = await readOnHost(s, paths.get(h.name)!);
        const stray = await strayTemps(s, paths.get(h.name)!);
        await s.close();
        let hostMove = 0;
        let hostMoved = 0;
        for (const [p, got] of now) {
          const old = before.get(h.name)!.get(p)!;
          const neu = p === bin ? binSha : rendered.get(h.name)!.get(p);
          expect(
            [old.sha256, neu],
            `round ${round} ${h.name}:${p} is neither old nor new`,
          ).toContain(got.sha256);
          if (old.sha256 === neu) continue;
          hostMove++;
          if (got.sha256 === neu) {
            hostMoved++;
            moved.push(got.ctimeMs!);
          }
        }
        toMove += hostMove;
        perHost.push(
          `${h.name} ${hostMoved}/${hostMove}${stray.length ? ` (partial: ${stray.join(', ')})` : ''}`,
        );
      }
      const at = (t: number) => `${Math.round(t - seenAt)} ms`;
      const span = moved.length
        ? `, written at ${at(Math.min(...moved))} to ${at(Math.max(...moved))}`
        : '';
      console.log(
        `round ${round}: ${r.signal === 'SIGKILL' ? `SIGKILL ${delay} ms after node1's first write` : `wire ended first (exit ${r.code})`}; written ${perHost.join(', ')}${span}`,
      );
      expect(toMove, `round ${round}: the run had nothing to write`).toBeGreaterThan(0);
      if (r.signal !== 'SIGKILL') continue; // the push finished first; still a valid round
      kills++;
      if (moved.length > 0 && moved.length < toMove) midPush++;
    }
    await n1.close();
    await n3.close();
    console.log(
      `kills: ${kills}, landed between a run's first and last write (read on the hosts): ${midPush}`,
    );
    expect(kills).toBeGreaterThanOrEqual(targets.length / 2);
    expect(midPush * 2, `only ${midPush} of ${kills} kills landed mid-push`).toBeGreaterThanOrEqual(
      kills,
    );
    // Files, binaries and apiserver certs moved back and forth; the next good run converges everything.
    wireOk(a);
    const final = renderedTrees();
    for (const h of lab.info.hosts) {
      const s = await lab.ssh(h.name);
      const files = new Map([...final.get(h.name)!, [bin, binSha]]);
      const now = await readOnHost(s, [...files.keys()]);
      for (const [p, sha] of files)
        expect(now.get(p)!.sha256, `${h.name}:${p} after the converging run`).toBe(sha);
      const stray = await strayTemps(s, [...files.keys()]);
      if (stray.length)
        console.log(`${h.name}: partial files the converging run left: ${stray.join(' ')}`);
      await s.close();
    }
    expect(wireOk(a).plan.noop).toBe(true);
  }, 900_000);

  // transport's single-file write (pending markers, backup records, installed.json, the snapshot a
  // restore copies) is temp file + rename: a writer killed mid-transfer must leave the old file.
  it('a single-file write killed mid-transfer leaves the old file, never a truncated one', async () => {
    const target = '/var/lib/hardwire/test-big-write';
    const s = await lab.ssh('node1');
    await s.exec(['sh', '-c', `mkdir -p ${dirname(target)} && printf old > ${target}`]);
    const old = (await remote(s, ['sha256sum', target])).slice(0, 64);
    const size = 64 * 1024 * 1024;
    const neu = createHash('sha256').update(Buffer.alloc(size, 7)).digest('hex');
    const script = join(lab.stateDir, 'big-write.ts');
    writeFileSync(
      script,
      [
        `import { labConnect } from ${JSON.stringify(join(repoRoot, 'harness', 'lab', 'index.ts'))};`,
        `const s = await labConnect('node1', ${JSON.stringify({ name: lab.name, stateDir: lab.stateDir })});`,
        `await s.writeFileAtomic(${JSON.stringify(target)}, Buffer.alloc(${size}, 7), { mode: 0o644 });`,
        'await s.close();',
      ].join('\n'),
    );
    const child = spawn(process.execPath, [script], { stdio: 'ignore' });
    const exited = new Promise<string | null>((res) => child.on('close', (_c, sig) => res(sig)));
    // Killed once the host's temp file holds more than 1 MiB: mid-transfer, read on the host.
    const seen = await s.exec(
      [
        'sh',
        '-c',
        `n=0; while [ $n -lt 3000 ]; do
      for f in ${dirname(target)}/.hardwire.*; do sz=$(stat -c %s "$f" 2>/dev/null) && [ "$sz" -gt 1048576 ] && { echo "$sz"; exit 0; }; done
      n=$((n + 1)); sleep 0.02; done; exit 1`,
      ],
      { timeoutMs: 120_000, allowFail: true },
    );
    child.kill('SIGKILL');
    expect(await exited, 'the write finished before it was seen').toBe('SIGKILL');
    expect(seen.code, 'the temp file never grew').toBe(0);
    await new Promise((res) => setTimeout(res, 2000));
    const after = (
      await remote(s, ['sh', '-c', `sha256sum < ${target} | cut -c1-64; stat -c %s ${target}`])
    ).split('\n');
    console.log(
      `killed with ${seen.stdout.trim()} of ${size} bytes sent; ${target} is now ${after[1]} bytes`,
    );
    await s.exec(['sh', '-c', `rm -f ${target} ${dirname(target)}/.hardwire.*`]);
    await s.close();
    expect(
      [old, neu],
      `${target} is neither the old nor the new version (${after[1]} bytes)`,
    ).toContain(after[0]);
  }, 300_000);

  it('a host powered off during a rolling restart stops the roll, names the host, and the rest keeps serving', async () => {
    const changed = variant('inv-roll.yaml', (d) => {
      d.cluster.extraArgs = { 'kube-apiserver': { v: '1' } };
    });
    const apiserverStarted = async (host: string) => {
      const s = await lab.ssh(host);
      const t = await remote(s, [
        'systemctl',
        'show',
        '-p',
        'ActiveEnterTimestampMonotonic',
        '--value',
        'kube-apiserver.service',
      ]);
      await s.close();
      return Number(t);
    };
    const node3Before = await apiserverStarted('node3');
    expect(node3Before).toBeGreaterThan(0);
    let stopped = false;
    const r = await wireWatching(
      changed,
      (stderr) => {
        if (!stopped && /\[node1\] systemctl (re)?start kube-apiserver\.service/.test(stderr)) {
          stopped = true;
          // The plug pulled, not an orderly power-off, which under load can outlast node2's own restart.
          void labStop('node2', { name: lab.name, stateDir: lab.stateDir }, 0);
        }
      },
      ['--gate-timeout', '30'],
    );
    // CI at dc179ab saw no kube-apiserver (re)start on node1 at all; the wire's own words say why.
    expect(stopped, r.stderr.slice(-3000)).toBe(true);
    expect(r.code, r.stderr.slice(-3000)).toBe(1);
    expect(r.stderr).toMatch(/error: \[node2\] /);
    expect(r.stderr).not.toMatch(/\[node3\] systemctl restart kube-apiserver/);
    // The roll stopped, as systemd on node3 tells: its apiserver is the process that ran before the wire.
    expect(await apiserverStarted('node3'), 'node3 kube-apiserver was not restarted').toBe(
      node3Before,
    );
    const i = loadInventory(changed);
    // The rest keeps serving, asked with curl (not hardwire's gate code): /readyz on node1 and node3.
    const caFile = join(state, i.cluster.name, 'pki', 'ca.crt');
    for (const h of [i.hosts[0]!, i.hosts[2]!]) {
      const c = spawnSync(
        'curl',
        ['-sS', '--max-time', '10', '--cacert', caFile, `https://${h.address}:6443/readyz`],
        { encoding: 'utf8' },
      );
      expect(`${c.stdout}${c.stderr}`, `${h.name} /readyz`).toBe('ok');
    }
    const s = await lab.ssh('node1');
    await expect(checkEtcd(i, s)).rejects.toThrow(/unhealthy: .*10\.213\.\d+\.12/); // quorum of 2 serves; the third is down
    const put = etcdctlArgv(i, 'put', '/hardwire/probe', 'ok').map((a) =>
      a.startsWith('--endpoints=') ? `--endpoints=https://${i.hosts[0]!.address}:2379` : a,
    );
    expect((await s.exec(put)).stdout.trim()).toBe('OK');
    await s.close();
    await labStart('node2', { name: lab.name, stateDir: lab.stateDir });
    const first = wireOk(changed);
    await unitsSettled(first.plan);
    const again = wireOk(changed);
    // On failure: what the converging wire did, and what the next one still wanted to do.
    expect(
      again.plan.noop,
      JSON.stringify({ first: first.restarted, again: again.plan }).slice(0, 4000),
    ).toBe(true);
  }, 600_000);

  it('SSH auth failure and a changed host key are clear, distinct errors', () => {
    const { private: priv } = generateEd25519();
    const keyFile = join(lab.stateDir, 'stranger_ed25519');
    writeFileSync(keyFile, priv, { mode: 0o600 });
    const auth = hardwire([
      'wire',
      '--inventory',
      variant('inv-auth.yaml', (d) => {
        d.hosts[1].ssh.identityFile = keyFile;
      }),
      '--state-dir',
      state,
    ]);
    expect(auth.code).toBe(1);
    expect(auth.stderr).toMatch(/error: \[node2\] ssh-auth: /);

    const kh = readFileSync(lab.info.knownHosts, 'utf8').trim().split('\n');
    const line = (n: string) => kh.find((l) => l.split(' ')[0]!.split(',').includes(n))!;
    const swapped = join(lab.stateDir, 'known_hosts.swapped');
    writeFileSync(
      swapped,
      `${[line('node1'), line('node3').replace(/^\S+/, line('node2').split(' ')[0]!), line('node3')].join('\n')}\n`,
    );
    const changed = hardwire([
      'wire',
      '--inventory',
      variant('inv-hk.yaml', (d) => {
        d.knownHosts = swapped;
      }),
      '--state-dir',
      state,
      '--accept-new-host-keys',
    ]);
    expect(changed.code).toBe(1);
    expect(changed.stderr).toMatch(/error: \[node2\] ssh-host-key-changed: .*CHANGED/);
    expect(changed.stderr).not.toBe(auth.stderr);
  });
});
