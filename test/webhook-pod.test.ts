// Stage 2 (issue 22): a validating webhook served by a Pod behind a Service, on a 1-host workers
// lab. The server is hardwire's own (core/components/go/webhook, image hardwire.local/webhook), its
// serving cert for webhook.<ns>.svc signed by the cluster CA. Evidence from around hardwire: the
// real kubectl, the webhook Pod's logs, and the apiserver's journal over SSH. With the caBundle
// swapped for another CA, the journal holds the x509 line drill 3.C1 cites (harness/drills/trace.ts),
// and the cited line is re-opened in the Go root.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remote, wiredTestLab, type WiredLab } from './helpers/lab.ts';
import { binaryPath } from '../core/components/binaries/cache.ts';
import { goEnv } from '../core/components/binaries/go-env.ts';
import { IMAGES } from '../core/components/images.ts';
import { issueCa, issueLeaf, windowFor } from '../core/pki/issue.ts';
import { traceLine } from '../harness/drills/trace.ts';
import { PINNED_KUBERNETES } from '../lib/constants.ts';
import { run } from '../lib/proc.ts';
import { retry } from '../lib/retry.ts';

const NAME = 'w1w';
const HOST = 'node1';
const NS = 'hwtest-webhook';
const VWC = 'hwtest-webhook';
const DENIED = 'hardwire stage-2 webhook: key forbidden is not allowed';
const X509 = 'x509: certificate signed by unknown authority';

describe('a validating webhook served by a Pod behind a Service (issue 22, stage 2)', () => {
  let w: WiredLab;
  let kc: string;
  let clusterCa: string;
  const kubectl = async (args: string[], input?: string) =>
    run(
      binaryPath('kubectl', PINNED_KUBERNETES),
      ['--kubeconfig', kc, '--request-timeout=20s', ...args],
      { step: 'kubectl', allowFail: true, timeoutMs: 60_000, ...(input ? { input } : {}) },
    );
  const must = async (args: string[], input?: string) => {
    const r = await kubectl(args, input);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r;
  };
  const apply = (obj: object) => must(['apply', '-f', '-'], JSON.stringify(obj));
  const cm = (name: string, key: string) =>
    kubectl(['-n', NS, 'create', 'configmap', name, `--from-literal=${key}=v`]);
  const podLogs = async () => (await must(['-n', NS, 'logs', 'deployment/webhook'])).stdout;
  const vwc = (caPem: string) => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: VWC },
    webhooks: [
      {
        name: 'configmaps.webhook.hardwire.dev',
        failurePolicy: 'Fail',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 5,
        clientConfig: {
          service: { namespace: NS, name: 'webhook', path: '/validate', port: 443 },
          caBundle: Buffer.from(caPem).toString('base64'),
        },
        // Only the test's namespace: a broken bundle must not hold up the rest of the cluster.
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
        rules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['configmaps'],
            scope: 'Namespaced',
          },
        ],
      },
    ],
  });

  beforeAll(async () => {
    w = await wiredTestLab(NAME, 1, { workers: true });
    kc = join(w.state, NAME, 'kubeconfigs', 'admin.conf');
    const pki = join(w.state, NAME, 'pki');
    clusterCa = readFileSync(join(pki, 'ca.crt'), 'utf8');
    // The apiserver dials the Service by the name webhook.<ns>.svc and checks it against the cert.
    const leaf = await issueLeaf(
      {
        id: 'webhook',
        file: 'webhook',
        ca: 'ca',
        cn: `webhook.${NS}.svc`,
        o: [],
        usage: 'server',
        dns: ['webhook', `webhook.${NS}`, `webhook.${NS}.svc`],
        ips: [],
        why: 'stage-2 webhook serving cert',
        placements: [],
      },
      { certPem: clusterCa, keyPem: readFileSync(join(pki, 'ca.key'), 'utf8') },
      windowFor(1),
    );
    const labels = { app: 'webhook' };
    await must(['create', 'namespace', NS]);
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: 'webhook-tls', namespace: NS },
      data: {
        'tls.crt': Buffer.from(leaf.certPem).toString('base64'),
        'tls.key': Buffer.from(leaf.keyPem).toString('base64'),
      },
    });
    await apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'webhook', namespace: NS },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: [
              {
                name: 'webhook',
                image: IMAGES.webhook.ref,
                imagePullPolicy: 'Never',
                ports: [{ containerPort: 8443 }],
                // Ready once it listens: the Service has no endpoint before.
                readinessProbe: { tcpSocket: { port: 8443 }, periodSeconds: 1 },
                volumeMounts: [{ name: 'tls', mountPath: '/tls', readOnly: true }],
              },
            ],
            volumes: [{ name: 'tls', secret: { secretName: 'webhook-tls' } }],
          },
        },
      },
    });
    await apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'webhook', namespace: NS },
      spec: { selector: labels, ports: [{ port: 443, targetPort: 8443 }] },
    });
    await must(['-n', NS, 'rollout', 'status', 'deployment/webhook', '--timeout=120s']);
    await apply(vwc(clusterCa));
    // The apiserver reads webhook configurations through an informer: a server-side dry run (which
    // reaches webhooks with sideEffects None) until the Pod logs its review, whatever it answers.
    let n = 0;
    await retry(
      async () => {
        await kubectl([
          '-n',
          NS,
          'create',
          'configmap',
          `warmup-${++n}`,
          '--from-literal=a=v',
          '--dry-run=server',
        ]);
        if (!(await podLogs()).includes(`${NS}/warmup-${n} `))
          throw new Error('the webhook is not called yet');
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
  });
  afterAll(async () => {
    await w?.lab.down();
  });

  it("rejects a ConfigMap with key forbidden with the webhook's message, admits an ordinary one, and its Pod logs both reviews", async () => {
    const bad = await cm('bad', 'forbidden');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain(
      `admission webhook "configmaps.webhook.hardwire.dev" denied the request: ${DENIED}`,
    );
    expect((await kubectl(['-n', NS, 'get', 'configmap', 'bad'])).code).not.toBe(0);
    const good = await cm('good', 'ordinary');
    expect(good.code, good.stderr).toBe(0);
    const logs = await podLogs();
    expect(logs).toMatch(new RegExp(`review uid=\\S+ CREATE ConfigMap ${NS}/bad allowed=false`));
    expect(logs).toMatch(new RegExp(`review uid=\\S+ CREATE ConfigMap ${NS}/good allowed=true`));
  });

  it("with the caBundle of another CA, a create fails closed with the x509 error, which the apiserver's journal holds as drill 3.C1 cites it", async () => {
    const s = await w.lab.ssh(HOST);
    const cursor = /^-- cursor: (.+)$/m.exec(
      await remote(s, [
        'journalctl',
        '-u',
        'kube-apiserver',
        '-n',
        '0',
        '--show-cursor',
        '--no-pager',
      ]),
    )?.[1];
    expect(cursor).toBeTruthy();
    const other = await issueCa(
      {
        id: 'ca',
        file: 'other-ca',
        cn: 'hwtest-not-the-cluster-ca',
        why: 'a broken caBundle',
        placements: [],
      },
      windowFor(1),
    );
    await apply(vwc(other.certPem));
    // Until the informer has the new bundle, a create still succeeds: each try has a new name.
    let n = 0;
    const refused = await retry(
      async () => {
        const r = await cm(`during-break-${++n}`, 'ordinary');
        if (r.code === 0) throw new Error('admitted with the old bundle');
        return r;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    expect(refused.stderr).toContain('failed calling webhook "configmaps.webhook.hardwire.dev"');
    expect(refused.stderr).toContain(X509);
    const line = await retry(
      async () => {
        const j = await remote(s, [
          'journalctl',
          '-u',
          'kube-apiserver',
          '--no-pager',
          '-o',
          'cat',
          `--after-cursor=${cursor!}`,
        ]);
        const l = j
          .split('\n')
          .find((x) => x.includes('Failed calling webhook') && x.includes(X509));
        if (!l)
          throw new Error(
            `no x509 line in the apiserver journal after the cursor:\n${j.slice(-2000)}`,
          );
        return l;
      },
      { timeoutMs: 30_000, intervalMs: 1000 },
    );
    expect(line).toContain(`webhook.${NS}.svc`);
    // Traced as drill 3.C1's captured lines are, and the cited line re-opened in this Go root.
    const t = traceLine(line).find((x) => x.id === 'x509-unknown-authority');
    expect(t?.citation).toBe('std@go1.26.8/crypto/x509/verify.go:157');
    const goroot = (
      await run('go', ['env', 'GOROOT'], { step: 'go env', env: goEnv() })
    ).stdout.trim();
    expect(readFileSync(join(goroot, 'VERSION'), 'utf8').split('\n')[0]).toBe(t!.site.version);
    expect(
      readFileSync(join(goroot, 'src', t!.site.file), 'utf8').split('\n')[t!.site.line - 1],
    ).toContain(`"${X509}"`);
  }, 180_000);

  it('with the cluster CA back in the caBundle, a create is admitted by the webhook again', async () => {
    await apply(vwc(clusterCa));
    let n = 0;
    const name = await retry(
      async () => {
        const r = await cm(`after-restore-${++n}`, 'ordinary');
        if (r.code !== 0) throw new Error(`still refused: ${r.stderr}`);
        return `after-restore-${n}`;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    expect(await podLogs()).toMatch(
      new RegExp(`review uid=\\S+ CREATE ConfigMap ${NS}/${name} allowed=true`),
    );
    expect((await cm('bad-again', 'forbidden')).stderr).toContain(DENIED);
  }, 120_000);
});
