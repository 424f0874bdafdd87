// Certificate mistakes (modules 3.0 and 3.3) as drills: a serving cert without the address clients
// use, a client cert from a CA nobody trusts, and a kubeconfig holding another component's cert.
// Each is installed on every control-plane host through Wet, the component restarted, and the
// recovery re-renders the file from the cert table (wire's own phases, as `certs renew --restart`
// does), which the operator copies never stopped matching; the cluster CA is only read.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Inventory } from '../../core/inventory/load.ts';
import type { ComponentName } from '../../core/components/registry/index.ts';
import { APISERVER_PORT, K8S_DIR, PKI_DIR } from '../../lib/constants.ts';
import {
  KUBECONFIGS,
  kubeconfigLeaf,
  type CaSpec,
  type KubeconfigSpec,
} from '../../core/pki/table.ts';
import { issueCa, issueLeaf, windowFor } from '../../core/pki/issue.ts';
import { kubeconfigServer, kubeconfigYaml } from '../../core/pki/kubeconfig.ts';
import { pkiDir } from '../../core/pki/store.ts';
import {
  keptSpec,
  loadSigner,
  publicPemOf,
  pushRenewed,
  specsFor,
} from '../../core/certs/renew.ts';
import { changes } from './timeline.ts';
import { waitFor } from '../../lib/retry.ts';
import { WIRE_ROLL, type RecoveryStep } from './report.ts';
import { kubectl, kubectlWithHostKubeconfig, type KubectlResult } from './kubectl.ts';
import { blastRadius, readyzOn } from './probes.ts';
import type { Broken, DrillDef, DrillEnv } from './runner.ts';
import type { Intent } from '../../core/apply/wet.ts';
import { unitOf } from '../../lib/unit.ts';

export const MISTAKES = ['wrong-san', 'unknown-ca', 'wrong-client-cert'] as const;
export type Mistake = (typeof MISTAKES)[number];

const kc = (id: KubeconfigSpec['id']) => KUBECONFIGS.find((k) => k.id === id)!;
const cps = (inv: Inventory) => inv.controlPlaneHosts;
const api = (env: DrillEnv) => `https://${cps(env.inv)[0]!.address}:${APISERVER_PORT}`;

/** The address the controllers' kubeconfigs use (the host's own apiserver). */
export function controllerAddress(inv: Inventory): string {
  return new URL(kubeconfigServer(kc('controller-manager'), inv.endpoint)).hostname;
}

/** Writes `path` on every control-plane host, then restarts `unit` there, all at once (a break, not a roll). */
async function installAndRestart(
  env: DrillEnv,
  path: string,
  data: (host: string) => string,
  mode: number,
  unit: ComponentName,
  what: string,
): Promise<Broken> {
  const hosts = cps(env.inv).map((h) => h.name);
  await Promise.all(
    hosts.map((h) =>
      env.ctx.wet.run(h, `write ${path} (${what})`, (w) =>
        w.writeFileAtomic(path, data(h), { mode, owner: 'root:root' }),
      ),
    ),
  );
  await Promise.all(
    hosts.map((h) =>
      env.ctx.wet.run(h, `systemctl restart ${unitOf(unit)} (load it)`, (w) =>
        w.exec(['systemctl', 'restart', unitOf(unit)], { timeoutMs: 180_000 }),
      ),
    ),
  );
  return {
    hosts,
    action: `${what}: ${path} on ${hosts.join(', ')}, ${unit} restarted`,
    at: Date.now(),
    files: hosts.map((h) => `${h}:${path}`),
  };
}

/** Re-render the leaf's files from the table and push them with wire's phases (restart readers in order, gated). */
async function rerender(
  env: DrillEnv,
  leafId: string,
  why: string,
): Promise<{ steps: RecoveryStep[]; wets: { intents: readonly Intent[] }[] }> {
  const steps: RecoveryStep[] = [
    {
      step: `re-render ${leafId} from the cert table and push it with wire's phases (certs renew --restart without reissuing: the operator copy was never wrong)`,
      why,
      at: new Date().toISOString(),
    },
  ];
  const pushed = await pushRenewed(env.inv, env.stateDir, [leafId], {
    restart: true,
    gateTimeoutMs: env.ctx.opts.gateTimeoutMs,
    acceptNewHostKeys: env.ctx.opts.acceptNewHostKeys,
    log: env.log,
  });
  for (const e of changes(pushed.ctx.wet.intents))
    steps.push({ step: e.event, why: WIRE_ROLL, at: e.at });
  return { steps, wets: [pushed.ctx.wet] };
}

async function waitReady(env: DrillEnv, address: string, timeoutMs: number): Promise<void> {
  await waitFor(async () => (await readyzOn(env, address)).ok, timeoutMs, 1000);
}

const failed = (r: KubectlResult, re: RegExp) =>
  r.code !== 0 && re.test(r.output) ? r : undefined;

function kubeconfigWith(env: DrillEnv, k: KubeconfigSpec, certPem: string, keyPem: string): string {
  return kubeconfigYaml({
    cluster: env.inv.cluster.name,
    server: kubeconfigServer(k, env.inv.endpoint),
    caPem: loadSigner(env.stateDir, env.inv, 'ca').certPem,
    certPem,
    keyPem,
    user: kubeconfigLeaf(k).cn,
  });
}

// A Lease lasts 15 s: observing 20 s shows which controllers the mistake stopped.
const OBSERVE_MIN_MS = 20_000;

const wrongSan: DrillDef = {
  minObserveMs: OBSERVE_MIN_MS,
  name: 'cert-mistake wrong-san',
  title: 'Certificate mistake: the apiserver serving cert without the address the controllers use',
  whoLogs:
    'clients verify the serving cert: kube-controller-manager and kube-scheduler connect to https://127.0.0.1:6443 and reject it; the apiserver only sees handshakes fail',
  capture: {
    label: 'x509 hostname mismatch',
    units: ['kube-controller-manager', 'kube-scheduler'],
    pattern: 'x509: certificate is valid for',
  },
  async break(env) {
    const missing = controllerAddress(env.inv);
    const dir = pkiDir(env.stateDir, env.inv);
    const spec = specsFor(env.inv, ['apiserver'])[0]!;
    const kept = keptSpec(spec, readFileSync(join(dir, `${spec.file}.crt`), 'utf8'));
    const keyPem = readFileSync(join(dir, `${spec.file}.key`), 'utf8');
    // The real CA, the same key and every other SAN: only the address is missing.
    const cert = await issueLeaf(
      {
        ...kept,
        ips: kept.ips.filter((ip) => ip !== missing),
        dns: kept.dns.filter((d) => d !== missing),
      },
      loadSigner(env.stateDir, env.inv, 'ca'),
      windowFor(env.inv.cluster.certValidity.leafDays),
      { key: { keyPem, publicPem: publicPemOf(keyPem) } },
    );
    const b = await installAndRestart(
      env,
      `${PKI_DIR}/apiserver.crt`,
      () => cert.certPem,
      0o644,
      'kube-apiserver',
      `apiserver serving cert reissued without ${missing}`,
    );
    // The apiservers themselves are fine (admin reaches them at their addresses): wait until they
    // serve, so the blast radius shows the mistake and not a restart in progress.
    for (const h of cps(env.inv)) await waitReady(env, h.address, 90_000);
    return b;
  },
  // What the controllers do, by hand: the same server name against the same cert.
  symptom: async (env) =>
    failed(
      await kubectl(env.adminKubeconfig, [
        '--server',
        api(env),
        '--tls-server-name',
        controllerAddress(env.inv),
        'get',
        '--raw',
        '/readyz',
      ]),
      /x509: certificate is valid for/,
    ),
  blastRadius: (env) => blastRadius(env),
  recover: (env) =>
    rerender(
      env,
      'apiserver',
      'the table lists every address clients use (127.0.0.1 for the controllers on each host); the key is kept and the CA only signs',
    ),
};

const unknownCa: DrillDef = {
  minObserveMs: OBSERVE_MIN_MS,
  name: 'cert-mistake unknown-ca',
  title: "Certificate mistake: kube-scheduler's client cert from another CA",
  whoLogs:
    'the apiserver verifies client certs per request against --client-ca-file, so it logs the rejection; the scheduler only sees 401 Unauthorized',
  capture: {
    label: 'x509 unknown authority',
    units: ['kube-apiserver'],
    pattern: 'x509: certificate signed by unknown authority',
  },
  also: [{ label: 'what kube-scheduler sees', units: ['kube-scheduler'], pattern: 'Unauthorized' }],
  async break(env) {
    // A throwaway CA, in memory only: never the cluster CA, and its key is never written anywhere.
    const rogue: CaSpec = {
      id: 'ca',
      file: 'drill-throwaway-ca',
      cn: 'hardwire-drill-throwaway-ca',
      why: 'a CA the cluster does not trust',
      placements: [],
    };
    const ca = await issueCa(rogue, windowFor(1));
    const k = kc('scheduler');
    const leaf = await issueLeaf(kubeconfigLeaf(k), ca, windowFor(1));
    const yaml = kubeconfigWith(env, k, leaf.certPem, leaf.keyPem);
    return installAndRestart(
      env,
      `${K8S_DIR}/${k.file}`,
      () => yaml,
      0o600,
      'kube-scheduler',
      'scheduler client cert (same subject) from a throwaway CA',
    );
  },
  symptom: async (env) => {
    const h = cps(env.inv)[0]!;
    return failed(
      await kubectlWithHostKubeconfig(env.session(h.name), h.name, `${K8S_DIR}/scheduler.conf`, [
        '--server',
        api(env),
        'get',
        'lease',
        'kube-scheduler',
        '-n',
        'kube-system',
      ]),
      /must be logged in to the server|Unauthorized/,
    );
  },
  blastRadius: (env) => blastRadius(env),
  recover: (env) =>
    rerender(
      env,
      'kubeconfig-scheduler',
      'the table says scheduler.conf carries a cert from the cluster CA; the operator copy is that one',
    ),
};

const wrongClientCert: DrillDef = {
  minObserveMs: OBSERVE_MIN_MS,
  name: 'cert-mistake wrong-client-cert',
  title: "Certificate mistake: controller-manager.conf holding the scheduler's cert",
  whoLogs:
    'not an x509 failure: the cert is valid, so the apiserver authenticates system:kube-scheduler and RBAC refuses what the controller-manager asks; the controller-manager logs the 403 naming that user. Its Lease keeps renewing (the Role system::leader-locking-kube-scheduler lets the scheduler get and update every Lease in kube-system), so a Lease-only health check stays green: the controllers are what fail, when each asks for its service account',
  capture: {
    label: 'RBAC refusal naming the user',
    units: ['kube-controller-manager'],
    pattern: 'system:kube-scheduler.{0,3} cannot',
  },
  async break(env) {
    const dir = pkiDir(env.stateDir, env.inv);
    const file = kubeconfigLeaf(kc('scheduler')).file;
    const yaml = kubeconfigWith(
      env,
      kc('controller-manager'),
      readFileSync(join(dir, `${file}.crt`), 'utf8'),
      readFileSync(join(dir, `${file}.key`), 'utf8'),
    );
    return installAndRestart(
      env,
      `${K8S_DIR}/controller-manager.conf`,
      () => yaml,
      0o600,
      'kube-controller-manager',
      "controller-manager kubeconfig with the scheduler's cert and key",
    );
  },
  symptom: async (env) => {
    const h = cps(env.inv)[0]!;
    // The request each controller makes first (--use-service-account-credentials): its service account.
    const r = await kubectlWithHostKubeconfig(
      env.session(h.name),
      h.name,
      `${K8S_DIR}/controller-manager.conf`,
      [
        '--server',
        api(env),
        '-v=6',
        'get',
        'serviceaccount',
        'deployment-controller',
        '-n',
        'kube-system',
      ],
    );
    // -v=6 shows the response status; keep that and the error, not the temp kubeconfig's path.
    const output = r.output
      .split('\n')
      .filter((l) => /"Response"|Error from server/.test(l))
      .join('\n');
    return failed({ ...r, output }, /403 Forbidden[\s\S]*system:kube-scheduler/);
  },
  blastRadius: (env) => blastRadius(env),
  recover: (env) =>
    rerender(
      env,
      'kubeconfig-controller-manager',
      'the table pairs controller-manager.conf with the system:kube-controller-manager cert; the operator copy is that one',
    ),
};

export function mistakeDrill(kind: Mistake): DrillDef {
  return { 'wrong-san': wrongSan, 'unknown-ca': unknownCa, 'wrong-client-cert': wrongClientCert }[
    kind
  ];
}
