// wire on a workers lab: two hosts that are etcd, control plane and worker (lab/worker.ts prepares them). The evidence is read
// around hardwire, not from its report: containerd's own listings and journal over SSH, the real
// kubectl, raw watches and the kubelets' own credentials against the apiserver.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remote, wiredTestLab, type WiredLab } from './helpers/lab.ts';
import { hardwire } from './helpers/cli.ts';
import { credsFromKubeconfig, kubeJson, type KubeCreds } from '../core/transport/kube-api.ts';
import { binaryPath } from '../core/components/binaries/cache.ts';
import { PINNED_KUBERNETES } from '../lib/constants.ts';
import { IMAGES } from '../core/components/images.ts';
import { ensureImages } from '../core/components/image-build.ts';
import { stderrLogger } from '../lib/log.ts';
import { run } from '../lib/proc.ts';
import { nodeCgroups, NODE_PREPARE_UNIT } from '../harness/lab/worker.ts';
import { labFiles, readState } from '../harness/lab/state.ts';
import { labDir } from '../harness/lab/plan.ts';
import { retry } from '../lib/retry.ts';
import { moduleDir, reopen } from './helpers/modcache.ts';

const NAME = 'hwtest-wwire';
const HOSTS = ['node1', 'node2'];
const NS = 'hwtest';
/** The Phase 3 task list's namespace (issue 44). */
const LEARNER = 'api-lab';
const K = moduleDir('k8s.io/kubernetes', PINNED_KUBERNETES);

describe('wire on a workers lab (issue 22)', () => {
  let w: WiredLab;
  const labHosts = () => readState(labFiles(labDir(NAME, w.lab.stateDir)))!.hosts;
  let kc: string;
  let admin: KubeCreds;
  const kubectl = async (args: string[], allowFail = false) => {
    const r = await run(
      binaryPath('kubectl', PINNED_KUBERNETES),
      ['--kubeconfig', kc, '--request-timeout=20s', ...args],
      { step: 'kubectl', allowFail: true, timeoutMs: 60_000 },
    );
    if (!allowFail && r.code !== 0)
      throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r;
  };
  const podsOn = async (host: string) =>
    (
      await kubeJson<{
        items: {
          metadata: { name: string; namespace: string };
          status: { phase: string; podIP?: string };
        }[];
      }>(admin, 'GET', `/api/v1/pods?fieldSelector=spec.nodeName=${host}`)
    ).json.items;

  beforeAll(async () => {
    w = await wiredTestLab(NAME, HOSTS.length, { workers: true, fresh: true });
    kc = join(w.state, NAME, 'kubeconfigs', 'admin.conf');
    admin = credsFromKubeconfig(kc);
    await kubectl(['create', 'namespace', NS]);
  });
  afterAll(async () => {
    await w?.lab.down();
  });

  it('every node is Ready, as the kubelet reports it through the API', async () => {
    const nodes = (
      await kubeJson<{
        items: {
          metadata: { name: string };
          status: {
            conditions: { type: string; status: string }[];
            nodeInfo: { kubeletVersion: string; containerRuntimeVersion: string };
          };
        }[];
      }>(admin, 'GET', '/api/v1/nodes')
    ).json.items;
    expect(nodes.map((n) => n.metadata.name).sort()).toEqual(HOSTS);
    for (const n of nodes) {
      expect(n.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
      expect(n.status.nodeInfo.kubeletVersion).toBe(PINNED_KUBERNETES);
      expect(n.status.nodeInfo.containerRuntimeVersion).toBe('containerd://2.3.3');
    }
  });

  it("each probe Pod's containers are in containerd on its host (ctr over SSH), from the local images, and nothing was pulled", async () => {
    for (const h of HOSTS) {
      const s = await w.lab.ssh(h);
      const containers = await remote(s, [
        '/usr/local/bin/ctr',
        '-n',
        'k8s.io',
        'containers',
        'ls',
      ]);
      expect(containers).toContain(IMAGES.pause.ref);
      expect(containers).toContain(IMAGES.busybox.ref);
      const tasks = await remote(s, ['/usr/local/bin/ctr', '-n', 'k8s.io', 'tasks', 'ls']);
      expect((tasks.match(/RUNNING/g) ?? []).length).toBeGreaterThanOrEqual(2);
      // containerd's CRI logs every pull as `PullImage "<ref>"`; the images came from ctr import.
      const journal = await remote(s, [
        'journalctl',
        '-u',
        'containerd',
        '--no-pager',
        '-o',
        'cat',
      ]);
      expect(journal).toMatch(/ImageCreate event name:\\?"hardwire\.local\/pause:3\.10\.2/);
      expect(journal).not.toMatch(/PullImage/);
    }
  });

  it('kubectl logs and kubectl exec reach each probe Pod through the apiserver and the kubelet', async () => {
    for (const h of HOSTS) {
      expect((await kubectl(['-n', 'hardwire-probes', 'logs', `probe-${h}`])).stdout).toContain(
        'started',
      );
      expect(
        (
          await kubectl(['-n', 'hardwire-probes', 'exec', `probe-${h}`, '--', 'hostname'])
        ).stdout.trim(),
      ).toBe(`probe-${h}`);
    }
  });

  it('a Pod reaches the Pod on the other node, and the Service by its DNS name', async () => {
    const ip2 = (await podsOn('node2')).find((p) => p.metadata.name === 'probe-node2')!.status
      .podIP!;
    const get = (ip: string, port: number) =>
      kubectl([
        '-n',
        'hardwire-probes',
        'exec',
        'probe-node1',
        '--',
        'sh',
        '-c',
        'printf "GET / HTTP/1.0\\r\\n\\r\\n" | nc -w 5 "$0" "$1"',
        ip,
        String(port),
      ]);
    expect((await get(ip2, 8080)).stdout.trim().split('\n').pop()).toBe('probe-node2');
    const ns = (
      await kubectl([
        '-n',
        'hardwire-probes',
        'exec',
        'probe-node1',
        '--',
        'nslookup',
        'probe.hardwire-probes.svc.cluster.local',
      ])
    ).stdout;
    const svcIp = (
      await kubeJson<{ spec: { clusterIP: string } }>(
        admin,
        'GET',
        '/api/v1/namespaces/hardwire-probes/services/probe',
      )
    ).json.spec.clusterIP;
    expect(ns).toMatch(new RegExp(`Address:\\s*${svcIp.replace(/\./g, '\\.')}`));
    expect((await get(svcIp, 80)).stdout.trim().split('\n').pop()).toMatch(/^probe-node[12]$/);
  });

  it("a watch from the LIST's resourceVersion sees ADDED, then at least two MODIFIED, for kubectl run", async () => {
    const list = await kubeJson<{ metadata: { resourceVersion: string } }>(
      admin,
      'GET',
      `/api/v1/namespaces/${NS}/pods`,
    );
    const events: string[] = [];
    const done = watchUntilRunning(
      admin,
      `/api/v1/namespaces/${NS}/pods?watch=true&resourceVersion=${list.json.metadata.resourceVersion}&fieldSelector=metadata.name=w1`,
      events,
    );
    await kubectl([
      '-n',
      NS,
      'run',
      'w1',
      `--image=${IMAGES.busybox.ref}`,
      '--restart=Never',
      '--',
      'sleep',
      '3600',
    ]);
    await done;
    expect(events[0]).toBe('ADDED');
    expect(events.filter((e) => e === 'MODIFIED').length).toBeGreaterThanOrEqual(2);
  });

  it("the Node authorizer: node1's kubelet reads a secret its Pod uses; node2's gets 403", async () => {
    // Cited at v1.36.3: a Pod's secret gets an edge secret -> pod -> node (graph.go AddPod), and a read
    // is allowed only along such a path (node_authorizer.go hasPathFrom), else "no relationship found".
    expect(reopen(K, 'plugin/pkg/auth/authorizer/node/graph.go', 390)).toContain(
      'VisitPodSecretNames',
    );
    expect(reopen(K, 'plugin/pkg/auth/authorizer/node/graph.go', 372)).toContain(
      'g.addEdgeLocked(podVertex, nodeVertex, nodeVertex)',
    );
    expect(reopen(K, 'plugin/pkg/auth/authorizer/node/node_authorizer.go', 230)).toContain(
      'r.hasPathFrom(nodeName, startingType',
    );
    expect(reopen(K, 'plugin/pkg/auth/authorizer/node/node_authorizer.go', 237)).toContain(
      'no relationship found between node',
    );
    await kubectl(['-n', NS, 'create', 'secret', 'generic', 's1', '--from-literal=k=v']);
    await kubeJson(admin, 'POST', `/api/v1/namespaces/${NS}/pods`, {
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'uses-s1' },
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': 'node1' },
          containers: [
            {
              name: 'c',
              image: IMAGES.busybox.ref,
              command: ['sleep', '3600'],
              env: [{ name: 'K', valueFrom: { secretKeyRef: { name: 's1', key: 'k' } } }],
            },
          ],
        },
      },
    });
    const kubelet = (h: string) =>
      credsFromKubeconfig(join(w.state, NAME, 'kubeconfigs', h, 'kubelet.conf'));
    // The edge exists once the scheduler binds the Pod to node1.
    const mine = await retry(
      async () => {
        const r = await kubeJson(kubelet('node1'), 'GET', `/api/v1/namespaces/${NS}/secrets/s1`, {
          allow: [403],
        });
        if (r.status !== 200) throw new Error(`node1's kubelet got ${r.status}`);
        return r;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    expect(mine.status).toBe(200);
    const other = await kubeJson<{ message: string }>(
      kubelet('node2'),
      'GET',
      `/api/v1/namespaces/${NS}/secrets/s1`,
      { allow: [403] },
    );
    expect(other.status).toBe(403);
    expect(other.json.message).toContain('User "system:node:node2" cannot get resource "secrets"');
    expect(other.json.message).toContain(
      "no relationship found between node 'node2' and this object",
    );
  });

  // Issue 44: the learner's commands as written, images by their usual names from the lab registry
  // (node1, the first control-plane host). Before the "never imported" Pod below, so every pull in
  // containerd's journal so far is one of these.
  it('`kubectl run w1 --image=busybox` and `kubectl create deploy x --image=nginx` as written: Running and Available, pulled from the lab registry', async () => {
    // As the task list types them, in its namespace.
    await kubectl(['create', 'namespace', LEARNER]);
    await kubectl(['run', 'w1', '--image=busybox', '-n', LEARNER, '--', 'sleep', '3600']);
    await kubectl(['create', 'deploy', 'x', '--image=nginx', '-n', LEARNER]);
    await kubectl(['-n', LEARNER, 'wait', '--for=condition=Ready', 'pod/w1', '--timeout=50s']);
    await kubectl([
      '-n',
      LEARNER,
      'wait',
      '--for=condition=Available',
      'deploy/x',
      '--timeout=50s',
    ]);
    const pods = (
      await kubeJson<{
        items: {
          metadata: { name: string; labels?: Record<string, string> };
          spec: { nodeName: string; containers: { image: string }[] };
          status: { phase: string; podIP?: string; containerStatuses?: { imageID: string }[] };
        }[];
      }>(admin, 'GET', `/api/v1/namespaces/${LEARNER}/pods`)
    ).json.items;
    const w1 = pods.find((p) => p.metadata.name === 'w1')!;
    const x = pods.find((p) => p.metadata.labels?.app === 'x')!;
    expect(w1.status.phase).toBe('Running');
    expect(x.status.phase).toBe('Running');
    expect(w1.spec.containers[0]!.image).toBe('busybox');
    expect(x.spec.containers[0]!.image).toBe('nginx');
    // The digest each node holds is the one the lab registry serves: built on this machine, so
    // nowhere else has it.
    const served = JSON.parse(
      hardwire(['images', '--inventory', w.inv, '--state-dir', w.state, '--json']).stdout,
    ) as { registry: string; repositories: { image: string; tags: string[] }[] };
    expect(served.registry).toMatch(/^https:\/\/[\d.]+:5000$/);
    expect(served.repositories.map((r) => r.image).sort()).toEqual([
      'docker.io/library/busybox',
      'docker.io/library/nginx',
    ]);
    for (const p of [w1, x]) {
      const s = await w.lab.ssh(p.spec.nodeName);
      const repo = p === w1 ? 'library/busybox' : 'library/nginx';
      const digest = p.status.containerStatuses![0]!.imageID.split('@')[1]!;
      expect(p.status.containerStatuses![0]!.imageID).toBe(`docker.io/${repo}@${digest}`);
      const reg = await w.lab.ssh('node1');
      const head = await remote(reg, [
        'sh',
        '-c',
        `journalctl -u registry --no-pager -o cat | grep -cE '"(HEAD|GET) /v2/${repo}/manifests/latest[?]ns=docker.io '`,
      ]);
      expect(Number(head)).toBeGreaterThan(0);
      // The workers' containerd: the pull logged by the CRI, its result the digest above.
      const journal = await remote(s, [
        'journalctl',
        '-u',
        'containerd',
        '--no-pager',
        '-o',
        'cat',
      ]);
      // `Pulled image "busybox:latest" with image id "sha256:…", repo tag "docker.io/library/busybox:latest",
      // repo digest "docker.io/library/busybox@sha256:…"`: the name as typed, resolved to docker.io's.
      expect(journal).toMatch(
        new RegExp(
          `Pulled image \\\\?"${repo.replace('library/', '')}:latest\\\\?" with image id \\\\?"[^"\\\\]+\\\\?", repo tag \\\\?"docker\\.io/${repo}:latest\\\\?", repo digest \\\\?"docker\\.io/${repo}@${digest}\\\\?"`,
        ),
      );
      expect(journal).not.toMatch(/registry-1\.docker\.io/);
      const manifest = await remote(reg, [
        'sh',
        '-c',
        `ls /var/lib/registry/docker/registry/v2/repositories/${repo}/_manifests/revisions/sha256/`,
      ]);
      expect(manifest.split('\n')).toContain(digest.replace('sha256:', ''));
    }
    const nginxIp = x.status.podIP!;
    const page = await kubectl([
      '-n',
      LEARNER,
      'exec',
      'w1',
      '--',
      'wget',
      '-qO-',
      `http://${nginxIp}/`,
    ]);
    expect(page.stdout).toContain('Welcome to nginx!');
  });

  it("every pull in each worker's containerd journal was answered by the lab registry: the registry logged each, nothing went to docker.io", async () => {
    const regJournal = await remote(await w.lab.ssh('node1'), [
      'journalctl',
      '-u',
      'registry',
      '--no-pager',
      '-o',
      'cat',
    ]);
    const addrs = new Map(labHosts().map((h) => [h.name, h.address]));
    const all = new Set<string>();
    for (const h of HOSTS) {
      const s = await w.lab.ssh(h);
      const journal = await remote(s, [
        'journalctl',
        '-u',
        'containerd',
        '--no-pager',
        '-o',
        'cat',
      ]);
      const pulled = [
        ...new Set(
          [
            ...journal.matchAll(
              /Pulled image \\?"[^"\\]+\\?" with image id \\?"[^"\\]+\\?", repo tag \\?"([^"\\]+)\\?"/g,
            ),
          ].map((m) => m[1]!),
        ),
      ];
      // Every pull on this node named a docker.io library image, and the registry logged this
      // node's address asking for it.
      for (const ref of pulled) {
        all.add(ref);
        expect(ref).toMatch(/^docker\.io\/library\/(busybox|nginx):latest$/);
        const repo = ref.replace(/^docker\.io\//, '').replace(/:latest$/, '');
        // Its access log: `<client address> - - [...] "HEAD /v2/<repo>/manifests/latest?ns=docker.io ...`.
        expect(regJournal).toMatch(
          new RegExp(
            `^${addrs.get(h)!.replace(/\./g, '\\.')} - - \\[.*\\] "(HEAD|GET) /v2/${repo}/manifests/latest\\?ns=docker\\.io `,
            'm',
          ),
        );
      }
      expect(journal).not.toMatch(/registry-1\.docker\.io/);
    }
    expect([...all].sort()).toEqual([
      'docker.io/library/busybox:latest',
      'docker.io/library/nginx:latest',
    ]);
  });

  it('`hardwire images add` pushes a local tarball under a new name, and a Pod runs it by that name', async () => {
    const tarball = (await ensureImages(stderrLogger(true))).find(
      (i) => i.name === 'busybox',
    )!.path;
    const add = hardwire(
      [
        'images',
        'add',
        tarball,
        '--as',
        'tools/bb:2',
        '--inventory',
        w.inv,
        '--state-dir',
        w.state,
        '--json',
      ],
      { timeoutMs: 120_000 },
    );
    expect(add.code, add.stderr.slice(-2000)).toBe(0);
    expect((JSON.parse(add.stdout) as { pushed: string[] }).pushed[0]).toMatch(
      /^tools\/bb:2@sha256:/,
    );
    await kubectl(['-n', NS, 'run', 'bb2', '--image=tools/bb:2', '--', 'sleep', '3600']);
    await kubectl(['-n', NS, 'wait', '--for=condition=Ready', 'pod/bb2', '--timeout=50s']);
    const list = hardwire(['images', '--inventory', w.inv, '--state-dir', w.state]);
    expect(list.stdout).toMatch(/^docker\.io\/tools\/bb\t2$/m);
  });

  it("a Pod whose image was never imported fails with the kubelet's ErrImagePull or ImagePullBackOff", async () => {
    await kubectl([
      '-n',
      NS,
      'run',
      'absent',
      '--image=hardwire.local/absent:1',
      '--restart=Never',
      '--overrides={"spec":{"nodeSelector":{"kubernetes.io/hostname":"node2"}}}',
    ]);
    const reason = await retry(
      async () => {
        const p = await kubeJson<{
          status: { containerStatuses?: { state: { waiting?: { reason: string } } }[] };
        }>(admin, 'GET', `/api/v1/namespaces/${NS}/pods/absent`);
        const r = p.json.status.containerStatuses?.[0]?.state.waiting?.reason;
        if (r !== 'ErrImagePull' && r !== 'ImagePullBackOff')
          throw new Error(`waiting reason ${r}`);
        return r;
      },
      { timeoutMs: 90_000, intervalMs: 1000 },
    );
    expect(['ErrImagePull', 'ImagePullBackOff']).toContain(reason);
  });

  it("hardwire verify passes every gate, the workers' included", () => {
    const r = hardwire(['verify', '--inventory', w.inv, '--state-dir', w.state, '--json'], {
      timeoutMs: 300_000,
    });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const rep = JSON.parse(r.stdout) as { gates: { name: string; ok: boolean }[] };
    const names = rep.gates.map((g) => g.name);
    for (const h of HOSTS) {
      expect(names).toContain(`kubelet ${h}: Node Ready`);
      expect(names).toContain(
        `probe Pod on ${h}: Service probe.hardwire-probes.svc.cluster.local by DNS`,
      );
    }
    expect(rep.gates.every((g) => g.ok)).toBe(true);
  });

  it('a no-op re-wire starts nothing', () => {
    const r = hardwire(['wire', '--inventory', w.inv, '--state-dir', w.state, '--json'], {
      timeoutMs: 300_000,
    });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect((JSON.parse(r.stdout) as { restarted: unknown[] }).restarted).toEqual([]);
  });

  it('each workers lab host is prepared: its cgroups read-write, the kubelet sysctls shadowed, /dev/kmsg, a shared /', async () => {
    for (const h of HOSTS) {
      const s = await w.lab.ssh(h);
      expect(await remote(s, ['systemctl', 'is-active', NODE_PREPARE_UNIT]), h).toBe('active');
      const mounts = await remote(s, ['cat', '/proc/self/mountinfo']);
      for (const c of ['cpu', 'cpuacct', 'cpuset', 'memory', 'devices', 'freezer', 'blkio', 'pids'])
        expect(mounts, `${h} ${c}`).toMatch(new RegExp(` /sys/fs/cgroup/${c} rw,`));
      expect(
        await remote(s, [
          'cat',
          '/proc/sys/vm/overcommit_memory',
          '/proc/sys/kernel/panic',
          '/proc/sys/kernel/panic_on_oops',
        ]),
      ).toBe('1\n10\n1');
      expect(await remote(s, ['readlink', '/dev/kmsg'])).toBe('/dev/console');
      expect(mounts.split('\n').find((l) => l.split(' ')[4] === '/')).toMatch(/shared:/);
    }
  });

  it("each node's Pods sit under its own cgroup on this machine", () => {
    const mems = labHosts().map(
      (h) => nodeCgroups(h).find((d) => d.includes('/sys/fs/cgroup/memory/'))!,
    );
    expect(new Set(mems).size).toBe(HOSTS.length);
    for (const m of mems) expect(existsSync(join(m, 'kubepods', 'besteffort')), m).toBe(true);
  });

  it('teardown removes every container, mount, network rule and cgroup the workers made (read over SSH)', async () => {
    const before = await remote(await w.lab.ssh('node1'), [
      'sh',
      '-c',
      'pgrep -fc containerd-shim-runc-v2; ip -o link show cni0 | wc -l; nft list tables | grep -c kube-proxy; test -d /sys/fs/cgroup/memory/kubepods && echo cg',
    ]);
    expect(before.split('\n').map((l) => l.trim())).toEqual([
      expect.stringMatching(/^[1-9]/),
      '1',
      '2',
      'cg',
    ]);
    const r = hardwire(['teardown', '--inventory', w.inv, '--state-dir', w.state], {
      timeoutMs: 300_000,
    });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    for (const h of HOSTS) {
      const s = await w.lab.ssh(h);
      const left = await remote(s, [
        'sh',
        '-c',
        [
          'pgrep -fa "containerd|kubelet|kube-proxy|pause|httpd|sleep 3600" | grep -v pgrep',
          'ip -o link show cni0 2>/dev/null',
          'ip route | grep "^10\\.244\\."',
          'nft list tables | grep kube-proxy',
          'grep -E " /(var/lib/kubelet|var/lib/containerd|run/containerd)/" /proc/self/mountinfo',
          'ls -d /sys/fs/cgroup/*/kubepods 2>/dev/null',
          'find /var/lib/containerd /var/lib/kubelet -mindepth 1 | head -3',
          'ls -d /var/lib/cni /etc/cni 2>/dev/null',
        ]
          .map((c) => `${c} || true`)
          .join('; '),
      ]);
      expect(left, `${h} still has:\n${left}`).toBe('');
    }
    // The registry (node1): its unit and process gone, its storage kept until --purge-data.
    const reg = await w.lab.ssh('node1');
    const registryLeft = () =>
      remote(reg, [
        'sh',
        '-c',
        'pgrep -x registry; ls /etc/systemd/system/registry.service /etc/distribution/config.yml /var/lib/hardwire/registry-images 2>/dev/null; test -d /var/lib/registry/docker && echo storage || true',
      ]);
    expect(await registryLeft()).toBe('storage');
    const purge = hardwire(
      ['teardown', '--inventory', w.inv, '--state-dir', w.state, '--purge-data'],
      { timeoutMs: 300_000 },
    );
    expect(purge.code, purge.stderr.slice(-2000)).toBe(0);
    expect(await registryLeft()).toBe('');
  });

  it('lab down removes the cgroups the nodes made on this machine', async () => {
    const dirs = labHosts().flatMap((h) => nodeCgroups(h));
    expect(dirs.some((d) => existsSync(d))).toBe(true);
    await w.lab.down();
    for (const d of dirs) expect(existsSync(d), d).toBe(false);
  });
});

/** Collects event types for the watched Pod until it is Running. */
function watchUntilRunning(creds: KubeCreds, path: string, events: string[]): Promise<void> {
  const url = new URL(path, creds.server);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no Running in 90 s; events: ${events.join(', ')}`));
    }, 90_000);
    const req = httpsRequest(url, { ca: creds.ca, cert: creds.cert, key: creds.key }, (res) => {
      let buf = '';
      res.on('data', (c: Buffer) => {
        buf += c.toString('utf8');
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const ev = JSON.parse(buf.slice(0, nl)) as {
            type: string;
            object: { status?: { phase?: string } };
          };
          buf = buf.slice(nl + 1);
          events.push(ev.type);
          if (ev.object.status?.phase === 'Running') {
            clearTimeout(timer);
            req.destroy();
            resolve();
          }
        }
      });
    });
    req.on('error', (e) => {
      if (!events.length) reject(e);
    });
    req.end();
  });
}
