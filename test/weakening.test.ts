// Nothing in an inventory weakens the cluster without saying so (issue 41): an extraArgs override that
// fails a CIS check hardwire's own flags pass is refused with one line, unless cluster.allowWeaker
// names it; the rule table is kube-bench's own config, regenerated here from its source archive.
import { describe, expect, it } from 'vitest';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CIS_TABLE_FILE, cisTable } from '../core/validate/cis-checks.ts';
import { cisTableText, kubeBenchArchive } from '../scripts/cis-checks.ts';
import { hardwire } from './helpers/cli.ts';
import { hardwireAsync, inBatches } from './helpers/cli-async.ts';
import { requireInputs, skipWithoutInputs } from './helpers/inputs.ts';
import { tempDir } from './helpers/tmp.ts';

type Args = Record<string, Record<string, string>>;

/** One control-plane host and one worker, so every component's unit is rendered. */
function inventory(extraArgs: Args, allowWeaker?: string[]): string {
  return stringify({
    apiVersion: 'hardwire/v1',
    kind: 'Inventory',
    cluster: { name: 'demo', extraArgs, ...(allowWeaker ? { allowWeaker } : {}) },
    hosts: [
      { name: 'cp-0', address: '198.51.100.10' },
      { name: 'w-1', address: '198.51.100.20', roles: ['worker'] },
    ],
  });
}

const REMEDY = (c: string, f: string) =>
  `; remove it, or add "${c}.${f}" to cluster.allowWeaker to go on`;

/** Each refusal: its inventory and the exact line. */
const REFUSED: { name: string; text: string; line: string }[] = [
  {
    name: 'apiserver authorization-mode AlwaysAllow',
    text: inventory({ 'kube-apiserver': { 'authorization-mode': 'AlwaysAllow' } }),
    line: `error: cluster.extraArgs.kube-apiserver.authorization-mode: --authorization-mode=AlwaysAllow weakens the cluster (hardwire sets Node,RBAC): CIS 1.2.6 "Ensure that the --authorization-mode argument is not set to AlwaysAllow" fails (and CIS 1.2.7, CIS 1.2.8)${REMEDY('kube-apiserver', 'authorization-mode')}`,
  },
  {
    name: 'apiserver authorization-mode without Node',
    text: inventory({ 'kube-apiserver': { 'authorization-mode': 'RBAC' } }),
    line: `error: cluster.extraArgs.kube-apiserver.authorization-mode: --authorization-mode=RBAC weakens the cluster (hardwire sets Node,RBAC): CIS 1.2.7 "Ensure that the --authorization-mode argument includes Node" fails${REMEDY('kube-apiserver', 'authorization-mode')}`,
  },
  {
    name: 'apiserver anonymous-auth true',
    text: inventory({ 'kube-apiserver': { 'anonymous-auth': 'true' } }),
    line: `error: cluster.extraArgs.kube-apiserver.anonymous-auth: --anonymous-auth=true weakens the cluster: CIS 1.2.1 "Ensure that the --anonymous-auth argument is set to false" fails${REMEDY('kube-apiserver', 'anonymous-auth')}`,
  },
  {
    name: 'apiserver AlwaysAdmit added to the admission plugins',
    text: inventory({ 'kube-apiserver': { 'enable-admission-plugins': 'AlwaysAdmit' } }),
    line: `error: cluster.extraArgs.kube-apiserver.enable-admission-plugins: --enable-admission-plugins=NodeRestriction,AlwaysAdmit weakens the cluster (hardwire sets NodeRestriction): CIS 1.2.10 "Ensure that the admission control plugin AlwaysAdmit is not set" fails${REMEDY('kube-apiserver', 'enable-admission-plugins')}`,
  },
  {
    name: 'apiserver NodeRestriction disabled',
    text: inventory({ 'kube-apiserver': { 'disable-admission-plugins': 'NodeRestriction' } }),
    line: `error: cluster.extraArgs.kube-apiserver.disable-admission-plugins: --disable-admission-plugins=NodeRestriction weakens the cluster: it turns off NodeRestriction, which hardwire enables (kubelets may only modify their own Node and Pods)${REMEDY('kube-apiserver', 'disable-admission-plugins')}`,
  },
  {
    name: 'apiserver ServiceAccount admission disabled',
    text: inventory({ 'kube-apiserver': { 'disable-admission-plugins': 'ServiceAccount' } }),
    line: `error: cluster.extraArgs.kube-apiserver.disable-admission-plugins: --disable-admission-plugins=ServiceAccount weakens the cluster: CIS 1.2.12 "Ensure that the admission control plugin ServiceAccount is set" fails${REMEDY('kube-apiserver', 'disable-admission-plugins')}`,
  },
  {
    name: 'apiserver encryption at rest removed',
    text: inventory({ 'kube-apiserver': { 'encryption-provider-config': '' } }),
    line: `error: cluster.extraArgs.kube-apiserver.encryption-provider-config: --encryption-provider-config= weakens the cluster (hardwire sets /etc/kubernetes/encryption-config.yaml): CIS 1.2.27 "Ensure that the --encryption-provider-config argument is set as appropriate" fails${REMEDY('kube-apiserver', 'encryption-provider-config')}`,
  },
  {
    name: 'apiserver static token file',
    text: inventory({ 'kube-apiserver': { 'token-auth-file': '/etc/tokens.csv' } }),
    line: `error: cluster.extraArgs.kube-apiserver.token-auth-file: --token-auth-file=/etc/tokens.csv weakens the cluster: CIS 1.2.2 "Ensure that the --token-auth-file parameter is not set" fails${REMEDY('kube-apiserver', 'token-auth-file')}`,
  },
  {
    name: 'etcd client-cert-auth false',
    text: inventory({ etcd: { 'client-cert-auth': 'false' } }),
    line: `error: cluster.extraArgs.etcd.client-cert-auth: --client-cert-auth=false weakens the cluster (hardwire sets true): CIS 2.2 "Ensure that the --client-cert-auth argument is set to true" fails${REMEDY('etcd', 'client-cert-auth')}`,
  },
  {
    name: 'etcd peer-client-cert-auth false',
    text: inventory({ etcd: { 'peer-client-cert-auth': 'false' } }),
    line: `error: cluster.extraArgs.etcd.peer-client-cert-auth: --peer-client-cert-auth=false weakens the cluster (hardwire sets true): CIS 2.5 "Ensure that the --peer-client-cert-auth argument is set to true" fails${REMEDY('etcd', 'peer-client-cert-auth')}`,
  },
  {
    name: 'kubelet anonymous-auth true (a flag wins over the KubeletConfiguration)',
    text: inventory({ kubelet: { 'anonymous-auth': 'true' } }),
    line: `error: cluster.extraArgs.kubelet.anonymous-auth: --anonymous-auth=true weakens the cluster: CIS 4.2.1 "Ensure that the --anonymous-auth argument is set to false" fails${REMEDY('kubelet', 'anonymous-auth')}`,
  },
  {
    name: 'kubelet authorization-mode AlwaysAllow',
    text: inventory({ kubelet: { 'authorization-mode': 'AlwaysAllow' } }),
    line: `error: cluster.extraArgs.kubelet.authorization-mode: --authorization-mode=AlwaysAllow weakens the cluster: CIS 4.2.2 "Ensure that the --authorization-mode argument is not set to AlwaysAllow" fails${REMEDY('kubelet', 'authorization-mode')}`,
  },
  {
    name: 'kubelet read-only port',
    text: inventory({ kubelet: { 'read-only-port': '10255' } }),
    line: `error: cluster.extraArgs.kubelet.read-only-port: --read-only-port=10255 weakens the cluster: CIS 4.2.4 "Verify that if defined, the --read-only-port argument is set to 0" fails${REMEDY('kubelet', 'read-only-port')}`,
  },
  {
    name: 'kubelet seccomp-default false (a hand rule)',
    text: inventory({ kubelet: { 'seccomp-default': 'false' } }),
    line: `error: cluster.extraArgs.kubelet.seccomp-default: --seccomp-default=false weakens the cluster: containers without a seccomp profile of their own run Unconfined, not RuntimeDefault (CIS 4.2.14 asks for true; kube-bench checks only that it is set)${REMEDY('kubelet', 'seccomp-default')}`,
  },
  {
    name: 'kube-scheduler serving on every address',
    text: inventory({ 'kube-scheduler': { 'bind-address': '0.0.0.0' } }),
    line: `error: cluster.extraArgs.kube-scheduler.bind-address: --bind-address=0.0.0.0 weakens the cluster (hardwire sets 127.0.0.1): CIS 1.4.2 "Ensure that the --bind-address argument is set to 127.0.0.1" fails${REMEDY('kube-scheduler', 'bind-address')}`,
  },
  {
    name: 'apiserver authentication-config (hardwire renders it)',
    text: inventory({ 'kube-apiserver': { 'authentication-config': '/etc/x.yaml' } }),
    line: 'error: cluster.extraArgs.kube-apiserver.authentication-config: hardwire sets --authentication-config itself: hardwire renders the AuthenticationConfiguration it points at (anonymous requests to the health paths only); set anonymous-auth to decide anonymous auth yourself; remove it from extraArgs',
  },
  {
    name: 'allowWeaker naming no override',
    text: inventory({}, ['etcd.client-cert-auth']),
    line: 'error: cluster.allowWeaker[0]: "etcd.client-cert-auth" names no override: cluster.extraArgs.etcd.client-cert-auth is not set; remove it from cluster.allowWeaker',
  },
  {
    name: 'allowWeaker naming an override that weakens nothing',
    text: inventory({ 'kube-apiserver': { v: '2' } }, ['kube-apiserver.v']),
    line: 'error: cluster.allowWeaker[0]: cluster.extraArgs.kube-apiserver.v weakens no check hardwire knows; remove "kube-apiserver.v" from cluster.allowWeaker',
  },
  {
    name: 'allowWeaker entry that is no component.flag',
    text: inventory({}, ['anonymous-auth']),
    line: 'error: cluster.allowWeaker[0]: must be <component>.<flag>, such as kube-apiserver.anonymous-auth',
  },
];

/** Every path under dir with its size and mtime: any write shows up. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .sort()
    .map((p) => {
      const st = statSync(join(dir, p));
      return `${p} ${st.size} ${st.mtimeMs}`;
    });
}

describe('the CIS rule table', () => {
  const archive = kubeBenchArchive().path;

  it.skipIf(skipWithoutInputs(archive))(
    "is kube-bench's own config, regenerated byte for byte from its source archive",
    async () => {
      requireInputs(archive);
      expect(await cisTableText()).toBe(readFileSync(CIS_TABLE_FILE, 'utf8'));
    },
  );

  it('covers authorization, anonymous auth, NodeRestriction, etcd client and peer cert auth, the kubelet authn/authz', () => {
    const rule = (id: string) => {
      const c = cisTable().checks.find((x) => x.id === id);
      return c && { component: c.component, items: c.items };
    };
    const item = (flag: string, op: string, value: string) => ({ flag, set: true, op, value });
    expect(rule('1.2.6')).toEqual({
      component: 'kube-apiserver',
      items: [item('authorization-mode', 'nothave', 'AlwaysAllow')],
    });
    expect(rule('1.2.1')).toEqual({
      component: 'kube-apiserver',
      items: [item('anonymous-auth', 'eq', 'false')],
    });
    expect(rule('1.2.14')).toEqual({
      component: 'kube-apiserver',
      items: [item('enable-admission-plugins', 'has', 'NodeRestriction')],
    });
    expect(rule('2.2')).toEqual({
      component: 'etcd',
      items: [item('client-cert-auth', 'eq', 'true')],
    });
    expect(rule('2.5')).toEqual({
      component: 'etcd',
      items: [item('peer-client-cert-auth', 'eq', 'true')],
    });
    expect(rule('4.2.1')).toEqual({
      component: 'kubelet',
      items: [item('anonymous-auth', 'eq', 'false')],
    });
    expect(rule('4.2.2')).toEqual({
      component: 'kubelet',
      items: [item('authorization-mode', 'nothave', 'AlwaysAllow')],
    });
  });
});

describe('an override that weakens the cluster', () => {
  it('each is refused: exit 2, its one line naming the field, nothing written', async () => {
    const dir = tempDir();
    const state = join(dir, 'state');
    mkdirSync(state);
    writeFileSync(join(state, 'sentinel'), 'untouched\n');
    const before = snapshot(state);
    const files = REFUSED.map((c, i) => {
      const f = join(dir, `weak-${i}.yaml`);
      writeFileSync(f, c.text);
      return f;
    });
    const results = await inBatches(files, 2, (f) =>
      hardwireAsync(['render', '--inventory', f, '--state-dir', state]),
    );
    const wrong = REFUSED.flatMap((c, i) => {
      const r = results[i]!;
      return r.code === 2 && r.stderr === `${c.line}\n` && r.stdout === ''
        ? []
        : [`${c.name}: exit ${r.code}: ${r.stderr.trim()}`];
    });
    expect(wrong).toEqual([]);
    expect(snapshot(state)).toEqual(before);
  }, 300_000);

  it('goes on when cluster.allowWeaker names it, and the unit says so in that flag’s reason', () => {
    const dir = tempDir();
    const file = join(dir, 'inv.yaml');
    writeFileSync(
      file,
      inventory(
        {
          'kube-apiserver': { 'anonymous-auth': 'true', 'enable-admission-plugins': 'PodSecurity' },
          etcd: { 'client-cert-auth': 'false' },
        },
        ['kube-apiserver.anonymous-auth', 'etcd.client-cert-auth'],
      ),
    );
    const r = hardwire(['render', '--inventory', file, '--state-dir', join(dir, 'state')]);
    expect(r.code, r.stderr).toBe(0);
    const unit = (c: string) =>
      readFileSync(
        join(dir, 'state', 'demo', 'hosts', 'cp-0', 'etc', 'systemd', 'system', `${c}.service`),
        'utf8',
      );
    const api = unit('kube-apiserver');
    expect(api).toContain(
      '# --anonymous-auth: set in the inventory (cluster.extraArgs); allowed weaker by cluster.allowWeaker: CIS 1.2.1 "Ensure that the --anonymous-auth argument is set to false" fails',
    );
    expect(unit('etcd')).toMatch(
      /# --client-cert-auth: .*\(value from inventory extraArgs\); allowed weaker by cluster\.allowWeaker: CIS 2\.2 "Ensure that the --client-cert-auth argument is set to true" fails\n(.*\n)?\s*--client-cert-auth=false/,
    );
    // An added admission plugin joins hardwire's list: NodeRestriction stays.
    expect(api).toMatch(/\n\s*--enable-admission-plugins=NodeRestriction,PodSecurity \\\n/);
    expect(api).toContain(
      "(hardwire's NodeRestriction, with cluster.extraArgs: NodeRestriction,PodSecurity)",
    );
  });
});
