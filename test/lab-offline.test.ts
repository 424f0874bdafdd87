// The lab never sends traffic off this machine: once a lab is down (its bridge gone, as after
// `lab down` or a reboot), a connection to its address fails here at once, and every command given
// its inventory says the lab is down in one line, before it connects. Real containers, real routes.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tcpAttempt } from './helpers/net.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labDown, labStop, labUp, type LabInfo } from '../harness/lab/index.ts';
import { labInventoryPath, labNameOf } from '../harness/lab/guard.ts';
import { LAB_RANGE, labPlan } from '../harness/lab/plan.ts';
import { parseRoutes } from '../harness/lab/routes.ts';
import { ipv4ToInt } from '../lib/net.ts';
import { repoRoot } from '../lib/paths.ts';
import type { CliResult } from './helpers/cli.ts';
import { hardwireAsync, inBatches } from './helpers/cli-async.ts';
import { tempDir } from './helpers/tmp.ts';

const NAME = 'hwtest-offline';
const stateDir = join(tmpdir(), 'hardwire-lab-offline-test');
const opts = { name: NAME, stateDir };
const plan = labPlan(NAME, 1, stateDir);
const address = plan.hosts[0]!.address;

/** The main-table route for exactly the lab range: its type ("unreachable") or undefined. */
function labRangeRouteType(): string | undefined {
  const routes = JSON.parse(
    execFileSync('ip', ['-j', '-4', 'route', 'show', 'exact', LAB_RANGE.text]).toString() || '[]',
  ) as { type?: string }[];
  return routes[0] ? (routes[0].type ?? 'unicast') : undefined;
}

/** `ip route get`: the kernel's answer for one address, as text (an error line when it has no route). */
function routeGet(addr: string): { code: number; text: string } {
  const r = spawnSync('ip', ['-4', 'route', 'get', addr], { encoding: 'utf8' });
  return { code: r.status ?? -1, text: `${r.stdout}${r.stderr}`.trim() };
}

/** The address has no way off this machine: the kernel says unreachable, and a connect fails at once. */
async function expectFailsLocally(addr: string): Promise<void> {
  // The route first: if it went out the default route, the connect below would send a SYN off the machine.
  const route = routeGet(addr);
  expect(route.text, 'ip route get').toMatch(/No route to host|unreachable/);
  expect(route.text).not.toMatch(/\bvia\b/);
  const attempt = await tcpAttempt(addr);
  expect(attempt.result).toMatch(/^(EHOSTUNREACH|ENETUNREACH)$/);
  // The errno is the evidence that the kernel refused it here (no SYN left); the bound is only
  // tcpAttempt's own 5 s limit, generous because a loaded 2-core machine can delay the callback by seconds.
  expect(attempt.ms, 'fails here, not after a timeout').toBeLessThan(5000);
}

function expectOneLine(r: CliResult, re: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
  expect(r.stderr).toMatch(re);
}

describe('lab inventories (pure)', () => {
  it('knows a lab inventory by its cluster name and hosts, and the path lab up writes', () => {
    const p = labPlan('lab', 2, '/s');
    const hosts = p.hosts.map((h) => ({ name: h.name, address: h.address }));
    expect(labNameOf({ cluster: { name: 'lab' }, hosts })).toBe('lab');
    expect(labNameOf({ cluster: { name: 'other' }, hosts })).toBeUndefined();
    expect(labNameOf({ cluster: { name: 'lab' }, hosts: hosts.slice(1) })).toBeUndefined();
    expect(labNameOf({ cluster: { name: 'Not_A_Lab' }, hosts })).toBeUndefined();
    expect(labInventoryPath('/x/state/lab/lab/inventory.yaml')).toEqual({
      stateDir: '/x/state',
      name: 'lab',
    });
    expect(labInventoryPath('/x/hosts/example.yaml')).toBeUndefined();
  });
});

describe('the lab range route (root, in a network namespace of its own)', () => {
  it('is added once, kept as it is on re-runs, and never replaces a route someone else set on the range', () => {
    const script = join(tempDir(), 'route.mjs');
    writeFileSync(
      script,
      `
      import { execFileSync } from 'node:child_process';
      import { ensureLabRangeUnreachable } from ${JSON.stringify(join(repoRoot, 'harness', 'lab', 'route.ts'))};
      const ip = (...a) => execFileSync('ip', a).toString().trim();
      const out = [];
      await ensureLabRangeUnreachable(); out.push(ip('-4', 'route', 'show'));
      await ensureLabRangeUnreachable(); out.push(ip('-4', 'route', 'show'));
      ip('route', 'del', 'unreachable', '10.213.0.0/16');
      ip('link', 'add', 'vpn0', 'type', 'bridge'); ip('link', 'set', 'vpn0', 'up');
      ip('route', 'add', '10.213.0.0/16', 'dev', 'vpn0');
      try { await ensureLabRangeUnreachable(); out.push('accepted'); } catch (e) { out.push(e.message); }
      out.push(ip('-4', 'route', 'show'));
      console.log(JSON.stringify(out));
    `,
    );
    // unshare -n: a fresh network namespace, so this machine's routes and other labs are not touched.
    const r = spawnSync('unshare', ['-n', process.execPath, script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const [first, again, foreign, after] = JSON.parse(r.stdout) as string[];
    expect(first).toBe(`unreachable ${LAB_RANGE.text}`);
    expect(again).toBe(first);
    expect(foreign).toMatch(
      /^10\.213\.0\.0\/16 is routed by "10\.213\.0\.0\/16 dev vpn0", but hardwire labs need that range/,
    );
    expect(after).toMatch(/^10\.213\.0\.0\/16 dev vpn0/);
  });
});

describe('the routes the lab guard reads (root, in a network namespace of its own)', () => {
  it('parses /proc/net/route as ip route prints it: bridges up and down, the unreachable range, a gateway', () => {
    const script = join(tempDir(), 'routes.mjs');
    writeFileSync(
      script,
      `
      import { execFileSync } from 'node:child_process';
      import { readFileSync } from 'node:fs';
      const ip = (...a) => execFileSync('ip', a).toString().trim();
      ip('link', 'set', 'lo', 'up');
      ip('link', 'add', 'hwb-up', 'type', 'bridge'); ip('addr', 'add', '10.213.77.1/24', 'dev', 'hwb-up'); ip('link', 'set', 'hwb-up', 'up');
      ip('link', 'add', 'hwb-down', 'type', 'bridge'); ip('addr', 'add', '10.213.78.1/24', 'dev', 'hwb-down');
      ip('link', 'add', 'other0', 'type', 'bridge'); ip('addr', 'add', '192.0.2.9/28', 'dev', 'other0'); ip('link', 'set', 'other0', 'up');
      ip('route', 'add', 'default', 'via', '192.0.2.1');
      ip('route', 'add', 'unreachable', '10.213.0.0/16');
      console.log(JSON.stringify({ proc: readFileSync('/proc/net/route', 'utf8'), ip: JSON.parse(ip('-j', '-4', 'route', 'show')) }));
    `,
    );
    const r = spawnSync('unshare', ['-n', process.execPath, script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const { proc, ip } = JSON.parse(r.stdout) as {
      proc: string;
      ip: { dst: string; dev?: string; gateway?: string; type?: string }[];
    };
    const mine = parseRoutes(proc).map((x) => ({
      dst: x.cidr.bits === 0 ? 'default' : x.cidr.text.replace(/\/32$/, ''),
      dev: x.reject ? undefined : x.iface,
      reject: x.reject,
      gateway: x.gateway,
    }));
    const theirs = ip.map((x) => ({
      dst: x.dst,
      dev: x.type === 'unreachable' ? undefined : x.dev,
      reject: x.type === 'unreachable',
      gateway: x.gateway ? ipv4ToInt(x.gateway) : 0,
    }));
    expect(mine.sort((a, b) => a.dst.localeCompare(b.dst))).toEqual(
      theirs.sort((a, b) => a.dst.localeCompare(b.dst)),
    );
    // The bridge that is down has its address but no route: it serves nothing.
    expect(mine.map((x) => x.dst)).toEqual(
      expect.arrayContaining(['10.213.0.0/16', '10.213.77.0/24', 'default']),
    );
    expect(mine.map((x) => x.dst)).not.toContain('10.213.78.0/24');
  });
});

describe('a downed lab sends nothing off this machine (root, systemd-nspawn, ip route)', () => {
  let info: LabInfo;
  const keep = tempDir();
  const copy = join(keep, 'copied-lab-inventory.yaml');
  const cliState = join(keep, 'state');
  // Host-touching commands, each given the lab's inventory; none may get as far as connecting.
  const commands = (inv: string) => [
    ['verify', '--inventory', inv, '--state-dir', cliState],
    ['wire', '--dry-run', '--inventory', inv, '--state-dir', cliState],
    ['certs', 'check', '--inventory', inv, '--state-dir', cliState],
  ];

  beforeAll(async () => {
    await labDown(opts);
    info = await labUp({ ...opts, hosts: 1 });
    copyFileSync(info.inventory, copy);
  }, 600_000);

  afterAll(async () => {
    await labDown(opts).catch(() => {});
  }, 120_000);

  it('while the lab is up, its /24 goes to its bridge and the rest of the lab range is unreachable', async () => {
    expect(info.hosts[0]!.address).toBe(address);
    expect(labRangeRouteType()).toBe('unreachable');
    expect(routeGet(address).text).toMatch(new RegExp(`dev ${plan.bridge}\\b`));
    // 10.213.0.0/24 is never a lab subnet (third octets run 1..254).
    await expectFailsLocally('10.213.0.77');
  }, 60_000);

  it('a lab whose bridge is gone (as after a reboot) fails locally and is refused in one line', async () => {
    await labStop('node1', opts);
    execFileSync('ip', ['link', 'delete', 'dev', plan.bridge]);
    expect(existsSync(info.inventory)).toBe(true); // its state is still there, as after a reboot
    await expectFailsLocally(address);
    const t0 = performance.now();
    for (const r of await inBatches(commands(info.inventory), 3, hardwireAsync)) {
      expectOneLine(
        r,
        new RegExp(
          `^error: --inventory: lab "${NAME}" is down: no lab bridge on this machine serves ${address.replaceAll('.', '\\.')}; bring it up with: HARDWIRE_STATE=${stateDir} hardwire lab up --name ${NAME}$`,
          'm',
        ),
      );
    }
    // Generous: three CLI runs at once on a loaded 2-core machine, each a Node start-up of seconds. The
    // one-line refusal above is what shows that none got as far as connecting; this only catches a hang.
    expect(performance.now() - t0, 'no command waited on a connection').toBeLessThan(60_000);
    expect(existsSync(cliState)).toBe(false);
  }, 120_000);

  it('after lab down, the address still fails locally, and its inventory (gone or copied) is refused', async () => {
    await labDown(opts);
    expect(existsSync(info.inventory)).toBe(false);
    expect(labRangeRouteType()).toBe('unreachable');
    expect(execFileSync('ip', ['-4', 'route', 'show']).toString()).not.toContain(plan.subnet.text);
    await expectFailsLocally(address);
    // Edited so that it no longer names the lab: its lab-range address alone is refused.
    const renamed = join(keep, 'renamed.yaml');
    writeFileSync(
      renamed,
      readFileSync(copy, 'utf8').replace(`name: ${NAME}`, 'name: renamed-cluster'),
    );
    const gone = commands(info.inventory);
    const copied = commands(copy);
    const results = await inBatches(
      [...gone, ...copied, ['verify', '--inventory', renamed, '--state-dir', cliState]],
      3,
      hardwireAsync,
    );
    const addr = address.replaceAll('.', '\\.');
    for (const r of results.slice(0, gone.length))
      expectOneLine(
        r,
        new RegExp(`^error: --inventory: .*inventory\\.yaml is gone: lab "${NAME}" is down`),
      );
    for (const r of results.slice(gone.length, gone.length + copied.length))
      expectOneLine(
        r,
        new RegExp(
          `^error: --inventory: lab "${NAME}" is down: no lab bridge on this machine serves ${addr}`,
        ),
      );
    expectOneLine(
      results.at(-1)!,
      new RegExp(`^error: hosts\\[0\\]\\.address: ${addr} is a hardwire lab address`),
    );
    expect(existsSync(cliState)).toBe(false);
  }, 120_000);
});
