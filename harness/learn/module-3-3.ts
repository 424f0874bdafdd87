// Module 3.3 of the curriculum, admission webhooks: hardwire's own validating webhook
// (core/components/go/webhook, the image hardwire.local/webhook that wire imports on the workers)
// as a Pod behind a Service; its certificate wrong; the same rule as a webhook and as a
// ValidatingAdmissionPolicy, each failing its own way; matchConditions; a kubectl plugin. Then
// stage 1 (3.3f) and reinvocation (3.3g): a Python script the commands write, run on this machine
// (python3, as a learner's edit-and-restart loop) at a URL the apiservers reach, the machine's
// address on the cluster's network; it ends with the demo's bash.
//
// The serving certificate comes through the certificates API, as a learner can type it without the
// cluster CA's key: a CSR to kubernetes.io/kubelet-serving, the one built-in signer that issues
// server certificates, approved by the admin and signed by kube-controller-manager with the cluster
// CA (hardwire sets --cluster-signing-cert-file). That signer requires O=system:nodes and a CN
// system:node:…, so the certificate names a "node" webhook; it is a serving certificate only (no
// client auth), and the caBundle is the cluster CA every namespace already holds (kube-root-ca.crt).
//
// Every webhook configuration is scoped to api-lab and to a learn.hardwire.dev/webhook label, and
// each demo deletes its own at the end (its reset deletes it too): a failurePolicy Fail webhook
// is never left behind. 3.3b to 3.3d call the webhook 3.3a deployed.
import { X509Certificate } from 'node:crypto';
import { session } from '../../core/apply/context.ts';
import { citation, journalLines, MESSAGES, traceLine } from '../drills/index.ts';
import { APISERVER, KUBECTL, KUBERNETES } from './cites.ts';
import {
  core,
  createdAt,
  expectThat,
  getObj,
  recorded,
  type AuditDetail,
  type Obj,
} from './read.ts';
import type { Exercise, Findings, LearnEnv } from './types.ts';
import { issue, untilLive, webhookApp } from './lines.ts';

const SECTION = 'Module 3.3: admission webhooks';
const SVC_HOST = 'webhook.api-lab.svc';
const DENIED = 'hardwire stage-2 webhook: key forbidden is not allowed';
const LABEL = 'learn.hardwire.dev/webhook';
/** This machine's address on the cluster's network: the source address of its route to the apiserver. */
const ADDR_LINE = `ADDR=$(ip -4 -o route get $(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}' | sed 's#https://##; s#:.*##') | sed 's/.* src \\([0-9.]*\\) .*/\\1/'); echo "this machine, as the apiservers reach it: $ADDR"`;

/** Where 3.3f's and 3.3g's scripts listen on this machine. */
const STAGE1_PORT = 19443;
const REINVOKE_PORT = 19444;

/** crypto/x509's hostname error, as the drills' trace catalogues it (its line re-checked by the trace's own test). */
const X509_HOSTNAME = MESSAGES.find((m) => m.id === 'x509-hostname')!;

/** A ValidatingWebhookConfiguration for the webhook's Service, trusting the cluster CA, scoped to api-lab and one label value. */
const SERVICE = 'service: {namespace: api-lab, name: webhook, path: /validate, port: 443}';

const webhookConfig = (name: string, hook: string, label: string, extra = '', client = SERVICE) =>
  `kubectl apply -f - <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: ${name}}
webhooks:
- name: ${hook}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 5
  clientConfig:
    ${client}
    caBundle: $(kubectl get configmap kube-root-ca.crt -n api-lab -o jsonpath='{.data.ca\\.crt}' | base64 -w0)
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: api-lab}}
  objectSelector: {matchLabels: {${LABEL}: ${label}}}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps], scope: Namespaced}${extra}
EOF`;

/** A labelled ConfigMap written to NAME.yaml, to create (or dry-run) as many times as needed. */
const cmFile = (name: string, label: string, data: string) =>
  `cat > ${name}.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: ${name}, labels: {${LABEL}: ${label}}}
data: ${data}
EOF`;

/** Server dry runs, a second apart, until the answer holds `text`: a new configuration reaches admission through an informer. */
const until = (file: string, text: string) =>
  untilLive(`kubectl create -n api-lab -f ${file} --dry-run=server 2>&1 | grep -q '${text}'`);

const restartWebhook = [
  'kubectl rollout restart deploy/webhook -n api-lab',
  'kubectl rollout status deploy/webhook -n api-lab --timeout=120s',
];

interface Deployment extends Obj {
  status?: { availableReplicas?: number };
}

interface PodStatus extends Obj {
  status?: { startTime?: string };
}

/**
 * What the webhook's Pods that were already running at `at` (an audit timestamp) logged from then
 * on, read through the API (kubectl logs --since-time); undefined when none of them is left: a
 * Pod's log goes with it (3.3b restarts the webhook, 3.3c scales it to 0).
 */
async function webhookLogs(env: LearnEnv, at: string | undefined): Promise<string | undefined> {
  const pods = await env.api<{ items?: PodStatus[] }>(
    'GET',
    `${core(env, 'pods')}?labelSelector=${encodeURIComponent('app=webhook')}`,
  );
  const then = at ? Date.parse(at) : Number.POSITIVE_INFINITY;
  const running = (pods.json.items ?? []).filter(
    (p) => Date.parse(p.status?.startTime ?? '') <= then,
  );
  if (running.length === 0) return undefined;
  // From the second of `at` on: an earlier run's lines (the same names) are not this run's evidence.
  const since = at ? `?sinceTime=${encodeURIComponent(`${at.slice(0, 19)}Z`)}` : '';
  let out = '';
  for (const p of running) {
    const r = await env.api<string>('GET', `${core(env, 'pods', p.metadata.name)}/log${since}`);
    if (r.status === 200) out += typeof r.json === 'string' ? r.json : JSON.stringify(r.json);
  }
  return out;
}

/** How many times this apiserver skipped a webhook on a false matchCondition (its metrics). */
async function exclusions(env: LearnEnv, hook: string): Promise<number> {
  const r = await env.api<string>('GET', '/metrics');
  const text = typeof r.json === 'string' ? r.json : '';
  const m = new RegExp(
    `^apiserver_admission_match_condition_exclusions_total\\{[^}]*name="${hook.replace(/\./g, '\\.')}"[^}]*\\} (\\d+)`,
    'm',
  ).exec(text);
  return Number(m?.[1] ?? 0);
}

const reviewed = (logs: string, name: string, allowed: boolean) =>
  new RegExp(`review uid=\\S+ CREATE ConfigMap api-lab/${name} allowed=${allowed}`).test(logs);

/** Audit events of creates of this ConfigMap (not dry runs) that were refused, with their messages. */
async function refusals(env: LearnEnv, name: string): Promise<AuditDetail[]> {
  const events = (await env.audit(`"name":"${name}"`)) as AuditDetail[];
  return events.filter(
    (e) =>
      e.verb === 'create' &&
      e.objectRef?.resource === 'configmaps' &&
      (e.responseStatus?.code ?? 0) >= 400 &&
      !new URL(e.requestURI, 'https://x').searchParams.has('dryRun'),
  );
}

async function refusedWith(env: LearnEnv, name: string, text: string): Promise<Findings> {
  const r = await refusals(env, name);
  return expectThat(
    r.some((e) => (e.responseStatus?.message ?? '').includes(text)),
    `the audit log shows no create of configmap ${name} refused with ${JSON.stringify(text)}${r.length ? ` (refused with: ${r.at(-1)!.responseStatus?.message?.slice(0, 160)})` : ''}`,
  );
}

/** The webhook was live (a refusal of `probe`, a dry run or not) before `name` was created: its silence about `name` means something. */
async function liveBefore(env: LearnEnv, probe: string, name: string): Promise<Findings> {
  const live = (await env.audit(`"name":"${probe}"`)).find(
    (e) => e.verb === 'create' && (e.responseStatus?.code ?? 0) >= 400,
  );
  const made = (await env.audit(`"name":"${name}"`)).findLast(
    (e) => e.verb === 'create' && e.responseStatus?.code === 201,
  );
  if (!live)
    return [`the audit log shows no create of ${probe} refused: the webhook was never seen live`];
  if (!made) return [`the audit log shows no create of configmap ${name} answered 201`];
  return expectThat(
    live.stageTimestamp < made.stageTimestamp,
    `${name} was created before the webhook was live (before ${probe}'s first refusal): its absence from the log proves nothing`,
  );
}

const absent = async (env: LearnEnv, name: string): Promise<Findings> =>
  expectThat(
    (await getObj(env, core(env, 'configmaps', name))) === undefined,
    `configmap ${name} is stored: it was not refused`,
  );

const noWebhookConfig = async (env: LearnEnv, name: string): Promise<Findings> =>
  expectThat(
    (await getObj(
      env,
      `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`,
    )) === undefined,
    `validatingwebhookconfiguration ${name} (failurePolicy Fail) is still on the cluster: delete it when done`,
  );

/** The webhook's Secret: its certificate, signed by the cluster CA, with or without the Service's name. */
async function servingCert(env: LearnEnv): Promise<{ findings: Findings; sans: string }> {
  const s = await getObj<Obj>(env, core(env, 'secrets', 'webhook-tls'));
  const root = await recorded(env, 'kube-root-ca.crt');
  if (!s?.data?.['tls.crt'] || !root?.['ca.crt'])
    return { findings: ['secret webhook-tls (with tls.crt) is not in api-lab'], sans: '' };
  const cert = new X509Certificate(Buffer.from(s.data['tls.crt'], 'base64'));
  const ca = new X509Certificate(root['ca.crt']);
  return {
    findings: expectThat(
      cert.checkIssued(ca) && cert.verify(ca.publicKey),
      `the certificate in secret webhook-tls is not signed by the cluster CA (issuer: ${cert.issuer.replace(/\n/g, ', ')})`,
    ),
    sans: cert.subjectAltName ?? '',
  };
}

/** The webhook's Deployment and Service, deployed by 3.3a; a finding when they are not there. */
async function webhookUp(env: LearnEnv): Promise<Findings> {
  const d = await getObj<Deployment>(env, '/apis/apps/v1/namespaces/api-lab/deployments/webhook');
  return [
    ...expectThat(
      (d?.status?.availableReplicas ?? 0) > 0,
      'deployment webhook in api-lab has no available Pod (3.3a deploys it)',
    ),
    ...expectThat(
      (await getObj(env, core(env, 'services', 'webhook'))) !== undefined,
      'service webhook is not in api-lab (3.3a creates it)',
    ),
  ];
}

export const MODULE_3_3: Exercise[] = [
  {
    id: '3.3a',
    section: SECTION,
    title: 'a validating webhook behind a Service, its certificate from the certificates API',
    task: [
      'Get a serving certificate for webhook.api-lab.svc signed by the cluster CA without its key: a',
      'CSR to the kubernetes.io/kubelet-serving signer (the built-in one that issues server certs; it',
      'wants O=system:nodes and CN system:node:...), approved. Run hardwire.local/webhook with it',
      'behind a Service "webhook", register it for labelled ConfigMaps in api-lab with the cluster CA',
      'as caBundle, and create one with a key "forbidden". Read the webhook Pod\'s log.',
    ],
    commands: [
      ...issue('webhook', 'learn-webhook-serving', `DNS:${SVC_HOST}`),
      'kubectl create secret tls webhook-tls -n api-lab --cert=webhook.crt --key=webhook.key',
      `kubectl apply -n api-lab -f - <<'EOF'\n${webhookApp('webhook')}\nEOF`,
      'kubectl rollout status deploy/webhook -n api-lab --timeout=120s',
      webhookConfig('learn-webhook', 'configmaps.webhook.hardwire.dev', 'hooked'),
      cmFile('hooked-bad', 'hooked', '{forbidden: "yes"}'),
      cmFile('hooked-good', 'hooked', '{ordinary: "yes"}'),
      until('hooked-bad.yaml', 'denied the request'),
      'kubectl create -n api-lab -f hooked-bad.yaml',
      'kubectl create -n api-lab -f hooked-good.yaml',
      "kubectl logs -n api-lab deploy/webhook --since=1m | grep 'api-lab/hooked-'",
      'kubectl delete validatingwebhookconfiguration learn-webhook',
    ],
    reset: [
      'kubectl delete validatingwebhookconfiguration learn-webhook --ignore-not-found',
      'kubectl delete csr learn-webhook-serving --ignore-not-found',
      'kubectl delete -n api-lab deployment/webhook service/webhook secret/webhook-tls configmap/hooked-good --ignore-not-found',
    ],
    watch: [
      "The certificate's issuer is the cluster CA and its SAN DNS:webhook.api-lab.svc. The create of",
      'hooked-bad is refused: \'admission webhook "configmaps.webhook.hardwire.dev" denied the request:',
      `${DENIED}'; hooked-good is created. The Pod's log has a review line for each (the dry runs`,
      'that waited for the configuration too): "review uid=... CREATE ConfigMap api-lab/hooked-bad',
      'allowed=false". The last line removes the configuration: failurePolicy Fail is not left behind.',
    ],
    cites: [
      KUBERNETES(
        'pkg/apis/certificates/helpers.go',
        69,
        'if !reflect.DeepEqual([]string{"system:nodes"}, req.Subject.Organization) {',
        'the kubelet-serving signer signs only a CSR from O=system:nodes, CN system:node:…, with DNS or IP SANs',
      ),
      KUBERNETES(
        'cmd/kube-controller-manager/app/certificates.go',
        160,
        'return config.ClusterSigningCertFile, config.ClusterSigningKeyFile',
        'with no per-signer files, it signs with --cluster-signing-cert-file: hardwire sets the cluster CA',
      ),
      APISERVER(
        'pkg/util/webhook/client.go',
        187,
        'serverName := cc.Service.Name + "." + cc.Service.Namespace + ".svc"',
        'the apiserver dials the Service as webhook.api-lab.svc and checks the certificate against that name',
      ),
      APISERVER(
        'pkg/admission/plugin/webhook/errors/statuserror.go',
        29,
        'deniedBy := fmt.Sprintf("admission webhook %q denied the request", webhookName)',
        "a webhook's allowed: false becomes this refusal, with the webhook's own message after it",
      ),
    ],
    async check(env) {
      const refused = await refusals(env, 'hooked-bad');
      const logs = await webhookLogs(env, refused.at(-1)?.stageTimestamp);
      const cert = await servingCert(env);
      return [
        ...cert.findings,
        ...expectThat(
          cert.sans.includes(`DNS:${SVC_HOST}`),
          `the webhook's certificate is not for ${SVC_HOST} (SAN: ${cert.sans || 'none'})`,
        ),
        ...(await webhookUp(env)),
        ...(await refusedWith(
          env,
          'hooked-bad',
          `admission webhook "configmaps.webhook.hardwire.dev" denied the request: ${DENIED}`,
        )),
        ...(await absent(env, 'hooked-bad')),
        // The Pod that refused it may be gone (3.3b, 3.3c restart it): then the refusal's text, which
        // only the webhook writes, is the evidence left.
        ...expectThat(
          logs === undefined || reviewed(logs, 'hooked-bad', false),
          "the webhook Pod's log has no review of hooked-bad with allowed=false",
        ),
      ];
    },
  },
  {
    id: '3.3b',
    section: SECTION,
    title: "a wrong SAN on the webhook's own certificate, recognised from its x509 line",
    task: [
      'After 3.3a: give the webhook a certificate for webhook.default.svc (the cluster CA signs it',
      'all the same), register it, create a labelled ConfigMap and read why it is refused. Find the',
      "apiserver's line for it in its journal (hardwire lab ssh node1 -- journalctl -u kube-apiserver).",
      'Then put the right certificate back and remove the configuration.',
    ],
    commands: [
      "kubectl get secret webhook-tls -n api-lab -o jsonpath='{.data.tls\\.crt}' | base64 -d > good.crt",
      "kubectl get secret webhook-tls -n api-lab -o jsonpath='{.data.tls\\.key}' | base64 -d > good.key",
      ...issue('wrong', 'learn-webhook-wrong-san', 'DNS:webhook.default.svc'),
      'kubectl create secret tls webhook-tls -n api-lab --cert=wrong.crt --key=wrong.key --dry-run=client -o yaml | kubectl replace -f -',
      ...restartWebhook,
      webhookConfig('learn-webhook-san', 'san.webhook.hardwire.dev', 'san'),
      cmFile('san-probe', 'san', '{ordinary: "yes"}'),
      until('san-probe.yaml', 'x509'),
      'kubectl create -n api-lab -f san-probe.yaml',
      'kubectl create secret tls webhook-tls -n api-lab --cert=good.crt --key=good.key --dry-run=client -o yaml | kubectl replace -f -',
      ...restartWebhook,
      'kubectl delete validatingwebhookconfiguration learn-webhook-san',
    ],
    reset: [
      'kubectl delete validatingwebhookconfiguration learn-webhook-san --ignore-not-found',
      'kubectl delete csr learn-webhook-wrong-san --ignore-not-found',
      'kubectl delete configmap san-probe -n api-lab --ignore-not-found',
    ],
    watch: [
      "The create fails closed (500), though nothing is wrong with the ConfigMap: 'failed calling",
      'webhook "san.webhook.hardwire.dev": failed to call webhook: Post',
      '"https://webhook.api-lab.svc:443/validate?timeout=5s": tls: failed to verify certificate:',
      "x509: certificate is valid for webhook.default.svc, not webhook.api-lab.svc'. The apiserver's",
      'journal has "Failed calling webhook, failing closed san.webhook.hardwire.dev: ..." with the same',
      `x509 text, crypto/x509's hostname check (${citation(X509_HOSTNAME.site)}, as the drills' trace`,
      'reads it): the trust was fine (the cluster CA signed it), the name was not.',
    ],
    cites: [
      APISERVER(
        'pkg/admission/plugin/webhook/validating/dispatcher.go',
        217,
        'klog.Warningf("Failed calling webhook, failing closed %v: %v", hook.Name, err)',
        "the apiserver's journal line, and the refusal: failurePolicy Fail turns a failed call into an error",
      ),
      APISERVER(
        'pkg/util/webhook/error.go',
        36,
        'return fmt.Sprintf("failed calling webhook %q: %v", e.WebhookName, e.Reason)',
        'the message kubectl prints, the TLS error as its reason',
      ),
    ],
    async check(env) {
      const findings: Findings = [
        ...(await refusedWith(env, 'san-probe', 'x509: certificate is valid for')),
        ...(await absent(env, 'san-probe')),
      ];
      let seen = false;
      for (const h of env.inv.controlPlaneHosts) {
        const lines = await journalLines(
          session(env.ctx, h.name),
          h.name,
          'kube-apiserver',
          'failing closed san\\.webhook\\.hardwire\\.dev',
          0,
        );
        seen ||= lines.some((l) => traceLine(l.line).some((t) => t.id === X509_HOSTNAME.id));
      }
      const cert = await servingCert(env);
      return [
        ...findings,
        ...expectThat(
          seen,
          "no control-plane host's kube-apiserver journal has a failing-closed line for san.webhook.hardwire.dev with crypto/x509's hostname error",
        ),
        ...cert.findings,
        ...expectThat(
          cert.sans.includes(`DNS:${SVC_HOST}`),
          `secret webhook-tls does not hold the right certificate again (SAN: ${cert.sans || 'none'})`,
        ),
        ...(await noWebhookConfig(env, 'learn-webhook-san')),
      ];
    },
  },
  {
    id: '3.3c',
    section: SECTION,
    title: 'the same rule as a webhook and as a ValidatingAdmissionPolicy: two failure surfaces',
    task: [
      'After 3.3a: the webhook\'s rule (no data key "forbidden") also as a ValidatingAdmissionPolicy,',
      'each bound to its own label. Both refuse a forbidden ConfigMap. Then take the webhook down',
      '(scale it to 0) and create an ordinary ConfigMap under each label.',
    ],
    commands: [
      webhookConfig('learn-twin', 'twin.webhook.hardwire.dev', 'twin-webhook'),
      `kubectl apply -f - <<'EOF'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: learn-no-forbidden}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"]}
  failurePolicy: Fail
  validations:
  - expression: "!has(object.data) || !('forbidden' in object.data)"
    message: key forbidden is not allowed
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: learn-no-forbidden}
spec:
  policyName: learn-no-forbidden
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: api-lab}}
    objectSelector: {matchLabels: {${LABEL}: twin-policy}}
EOF`,
      cmFile('twin-webhook-bad', 'twin-webhook', '{forbidden: "yes"}'),
      cmFile('twin-policy-bad', 'twin-policy', '{forbidden: "yes"}'),
      until('twin-webhook-bad.yaml', 'denied the request'),
      until('twin-policy-bad.yaml', 'denied request'),
      'kubectl create -n api-lab -f twin-webhook-bad.yaml',
      'kubectl create -n api-lab -f twin-policy-bad.yaml',
      'kubectl scale deploy/webhook -n api-lab --replicas=0',
      'kubectl wait --for=delete pod -l app=webhook -n api-lab --timeout=60s',
      `kubectl create configmap twin-webhook-down -n api-lab --from-literal=ordinary=yes --dry-run=client -o yaml | kubectl label --local -f - ${LABEL}=twin-webhook -o yaml | kubectl create -f -`,
      `kubectl create configmap twin-policy-down -n api-lab --from-literal=ordinary=yes --dry-run=client -o yaml | kubectl label --local -f - ${LABEL}=twin-policy -o yaml | kubectl create -f -`,
      'kubectl scale deploy/webhook -n api-lab --replicas=1',
      'kubectl rollout status deploy/webhook -n api-lab --timeout=120s',
      'kubectl delete validatingwebhookconfiguration learn-twin',
    ],
    reset: [
      'kubectl delete validatingwebhookconfiguration learn-twin --ignore-not-found',
      'kubectl delete validatingadmissionpolicy,validatingadmissionpolicybinding learn-no-forbidden --ignore-not-found',
      'kubectl delete configmap twin-policy-down twin-webhook-down -n api-lab --ignore-not-found',
      'kubectl scale deploy/webhook -n api-lab --replicas=1',
    ],
    watch: [
      "Refused both ways, in different words: the webhook's 'admission webhook",
      '"twin.webhook.hardwire.dev" denied the request\', the policy\'s "ValidatingAdmissionPolicy',
      "'learn-no-forbidden' with binding 'learn-no-forbidden' denied request\" (422). With the webhook",
      "down, the ordinary twin-webhook-down is refused all the same: 'failed calling webhook",
      '"twin.webhook.hardwire.dev": ... no endpoints available for service "webhook"\'; twin-policy-down',
      'is created: the policy is CEL in the apiserver, with no network hop to lose.',
    ],
    cites: [
      APISERVER(
        'pkg/admission/plugin/webhook/validating/dispatcher.go',
        217,
        'klog.Warningf("Failed calling webhook, failing closed %v: %v", hook.Name, err)',
        'a webhook that cannot be reached, with failurePolicy Fail, refuses every request it matches',
      ),
      APISERVER(
        'pkg/util/proxy/proxy.go',
        82,
        'no endpoints available for service %q',
        'the Service has no ready endpoint: the apiserver resolves the Service itself, before dialling',
      ),
      APISERVER(
        'pkg/admission/plugin/policy/validating/dispatcher.go',
        294,
        "ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s",
        'the policy refuses inside the apiserver: nothing to dial, so nothing to fail but the expression',
      ),
    ],
    async check(env) {
      return [
        ...(await refusedWith(
          env,
          'twin-webhook-bad',
          'admission webhook "twin.webhook.hardwire.dev" denied the request',
        )),
        ...(await refusedWith(
          env,
          'twin-policy-bad',
          "ValidatingAdmissionPolicy 'learn-no-forbidden'",
        )),
        ...(await refusedWith(
          env,
          'twin-webhook-down',
          'failed calling webhook "twin.webhook.hardwire.dev"',
        )),
        ...(await absent(env, 'twin-webhook-down')),
        ...expectThat(
          (await getObj(env, core(env, 'configmaps', 'twin-policy-down'))) !== undefined,
          'configmap twin-policy-down is not in api-lab: the policy should have admitted it with the webhook down',
        ),
        ...(await webhookUp(env)),
        ...(await noWebhookConfig(env, 'learn-twin')),
      ];
    },
  },
  {
    id: '3.3d',
    section: SECTION,
    title: 'matchConditions: narrowed before the call',
    task: [
      'After 3.3a: register the webhook with a matchCondition that calls it only for a ConfigMap that',
      'has a key "forbidden" (the only ones it can refuse). Create one without; then one with. Read',
      "the webhook's log.",
    ],
    commands: [
      webhookConfig(
        'learn-narrow',
        'narrow.webhook.hardwire.dev',
        'narrow',
        `
  matchConditions:
  - name: has-forbidden-key
    expression: "has(object.data) && 'forbidden' in object.data"`,
      ),
      cmFile('narrow-plain', 'narrow', '{ordinary: "yes"}'),
      cmFile('narrow-bad', 'narrow', '{forbidden: "yes"}'),
      until('narrow-bad.yaml', 'denied the request'),
      'kubectl create -n api-lab -f narrow-plain.yaml',
      'kubectl create -n api-lab -f narrow-bad.yaml',
      "kubectl logs -n api-lab deploy/webhook --since=1m | grep 'api-lab/narrow-' || true",
      'kubectl delete validatingwebhookconfiguration learn-narrow',
    ],
    reset: [
      'kubectl delete validatingwebhookconfiguration learn-narrow --ignore-not-found',
      'kubectl delete configmap narrow-plain -n api-lab --ignore-not-found',
    ],
    watch: [
      'narrow-plain is created and the log has no line for it: the CEL condition was false, so the',
      'apiserver never called. narrow-bad is refused by the webhook, and the log shows its reviews',
      '(the dry runs that waited, then the create) with allowed=false.',
    ],
    cites: [
      APISERVER(
        'pkg/admission/plugin/webhook/generic/webhook.go',
        334,
        'matchResult := matcher.Match(ctx, versionedAttr, nil, a.authorizer)',
        'the match conditions run in the apiserver, after the rules and selectors matched',
      ),
      APISERVER(
        'pkg/admission/plugin/webhook/generic/webhook.go',
        341,
        '// if no match, always skip webhook',
        'a false condition skips the webhook: no call, no failure policy',
      ),
    ],
    async check(env) {
      const logs = await webhookLogs(env, await createdAt(env, 'configmaps', 'narrow-plain'));
      const skipped = logs === undefined ? await exclusions(env, 'narrow.webhook.hardwire.dev') : 0;
      return [
        ...(await webhookUp(env)),
        ...expectThat(
          (await getObj(env, core(env, 'configmaps', 'narrow-plain'))) !== undefined,
          'configmap narrow-plain (no key forbidden) is not in api-lab',
        ),
        ...(await refusedWith(
          env,
          'narrow-bad',
          'admission webhook "narrow.webhook.hardwire.dev" denied the request',
        )),
        ...(await liveBefore(env, 'narrow-bad', 'narrow-plain')),
        // The Pod that served then, when it still runs: its log. Else the apiserver's own count.
        ...(logs === undefined
          ? expectThat(
              skipped > 0,
              'the webhook Pod that ran when narrow-plain was created is gone, and the apiserver counts no matchConditions exclusion for narrow.webhook.hardwire.dev',
            )
          : [
              ...expectThat(
                reviewed(logs, 'narrow-bad', false),
                "the webhook Pod's log has no review of narrow-bad: it was not called where it should be",
              ),
              ...expectThat(
                !logs.includes('api-lab/narrow-plain '),
                "the webhook Pod's log has a review of narrow-plain: the condition did not keep the call away",
              ),
            ]),
        ...(await noWebhookConfig(env, 'learn-narrow')),
      ];
    },
  },
  {
    id: '3.3e',
    section: SECTION,
    title: 'a kubectl plugin: an executable kubectl-NAME on PATH',
    task: [
      'Write kubectl-labinfo, a script that prints what api-lab holds and records that it ran (a',
      'ConfigMap plugin-ran with its argv). Put its directory on PATH, find it with kubectl plugin',
      'list (record what it found: a ConfigMap plugin-list), run it as kubectl labinfo.',
    ],
    commands: [
      'mkdir -p plugins',
      `cat > plugins/kubectl-labinfo <<'EOF'
#!/bin/bash
# kubectl labinfo [NAMESPACE]: the objects in a namespace, by kind, and a record that it ran.
ns=\${1:-api-lab}
echo "labinfo: $0 $*"
kubectl get configmaps,pods,deployments,services -n "$ns" --no-headers | awk '{split($1, k, "/"); n[k[1]]++} END {for (x in n) print "  " x ": " n[x]}'
kubectl create configmap plugin-ran -n api-lab --from-literal=argv0="$0" --from-literal=args="$*" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
EOF`,
      'chmod +x plugins/kubectl-labinfo',
      'export PATH=$PWD/plugins:$PATH',
      'kubectl plugin list | tee found.txt',
      'kubectl create configmap plugin-list -n api-lab --from-file=found=found.txt',
      'kubectl labinfo api-lab',
    ],
    reset: ['kubectl delete configmap plugin-ran plugin-list -n api-lab --ignore-not-found'],
    watch: [
      '"kubectl plugin list" names .../plugins/kubectl-labinfo; "kubectl labinfo" is not a kubectl',
      'command, so kubectl looks up kubectl-labinfo on PATH and execs it with the rest of the',
      'arguments: its first line is "labinfo: /.../plugins/kubectl-labinfo api-lab".',
    ],
    cites: [
      KUBECTL(
        'pkg/cmd/plugin/plugin.go',
        289,
        'if !strings.HasPrefix(filepath, prefix+"-") {',
        'plugin list: every executable on PATH whose name starts with kubectl-',
      ),
      KUBECTL(
        'pkg/cmd/plugin.go',
        60,
        'path, err := exec.LookPath(fmt.Sprintf("%s-%s", prefix, filename))',
        'an unknown command NAME is looked up as kubectl-NAME on PATH',
      ),
      KUBECTL(
        'pkg/cmd/plugin.go',
        87,
        'return syscall.Exec(executablePath, append([]string{executablePath}, cmdArgs...), environment)',
        'and kubectl replaces itself with it (exec), passing the remaining arguments',
      ),
    ],
    async check(env) {
      const ran = await recorded(env, 'plugin-ran');
      const found = await recorded(env, 'plugin-list');
      return [
        ...expectThat(
          ran !== undefined,
          'configmap plugin-ran is not in api-lab: the plugin has not run',
        ),
        ...expectThat(
          (ran?.argv0 ?? '').endsWith('/kubectl-labinfo'),
          `the plugin's argv0 is not a kubectl-labinfo on PATH (${ran?.argv0 ?? 'none'})`,
        ),
        ...expectThat(
          (found?.found ?? '').split('\n').some((l) => l.trim().endsWith('/kubectl-labinfo')),
          'configmap plugin-list does not record a kubectl-labinfo found by kubectl plugin list',
        ),
      ];
    },
  },
  {
    id: '3.3f',
    section: SECTION,
    title: 'stage 1: a webhook at a URL, served by a process the learner edits',
    task: [
      'Before any image: a webhook served by a script on this machine, at a URL the apiservers reach',
      "(this machine's address on the cluster's network), its certificate for that IP from the",
      'certificates API as in 3.3a. It refuses a ConfigMap key "forbidden". Create one with a key',
      '"secret" (admitted); edit the script to refuse "secret" too, restart it, create another.',
    ],
    commands: [
      ADDR_LINE,
      ...issue('hook', 'learn-stage1', 'IP:$ADDR'),
      `cat > hook.py <<'EOF'
import json, ssl, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

DENY = ["forbidden"]

class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["request"]
        bad = sorted(set((req.get("object") or {}).get("data") or {}) & set(DENY))
        resp = {"uid": req["uid"], "allowed": not bad}
        if bad:
            resp["status"] = {"code": 403, "message": "stage-1 webhook: key %s is not allowed" % bad[0]}
        print("review", req["operation"], "%s/%s" % (req["namespace"], req["name"]), "allowed=%s" % resp["allowed"], flush=True)
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

srv = HTTPServer((sys.argv[1], ${STAGE1_PORT}), Hook)
tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
tls.load_cert_chain("hook.crt", "hook.key")
srv.socket = tls.wrap_socket(srv.socket, server_side=True)
print("listening on https://%s:${STAGE1_PORT}/validate, denying %s" % (sys.argv[1], DENY), flush=True)
srv.serve_forever()
EOF`,
      `python3 hook.py $ADDR >> hook.log 2>&1 & HOOK=$!; until curl -sk -o /dev/null https://$ADDR:${STAGE1_PORT}/; do sleep 0.2; done; grep listening hook.log | tail -1`,
      webhookConfig(
        'learn-stage1',
        'stage1.webhook.hardwire.dev',
        'stage1',
        '',
        `url: https://$ADDR:${STAGE1_PORT}/validate`,
      ),
      cmFile('stage1-forbidden', 'stage1', '{forbidden: "yes"}'),
      cmFile('stage1-before', 'stage1', '{secret: "yes"}'),
      cmFile('stage1-after', 'stage1', '{secret: "yes"}'),
      until('stage1-forbidden.yaml', 'denied the request'),
      'kubectl create -n api-lab -f stage1-before.yaml',
      `sed -i 's/^DENY = \\["forbidden"\\]/DENY = ["forbidden", "secret"]/' hook.py && grep '^DENY' hook.py`,
      `kill $HOOK; wait $HOOK; python3 hook.py $ADDR >> hook.log 2>&1 & HOOK=$!; until curl -sk -o /dev/null https://$ADDR:${STAGE1_PORT}/; do sleep 0.2; done; grep listening hook.log | tail -1`,
      'kubectl create -n api-lab -f stage1-after.yaml',
      'cat hook.log',
      'kubectl delete validatingwebhookconfiguration learn-stage1',
    ],
    reset: [
      'kubectl delete validatingwebhookconfiguration learn-stage1 --ignore-not-found',
      'kubectl delete csr learn-stage1 --ignore-not-found',
      'kubectl delete configmap stage1-before -n api-lab --ignore-not-found',
    ],
    watch: [
      "The certificate's SAN is this machine's IP (kubelet-serving takes IP SANs). stage1-before is",
      'admitted: the script then refused only "forbidden". After the edit and a restart (no image, no',
      "rollout), stage1-after, the same data, is refused: 'admission webhook",
      '"stage1.webhook.hardwire.dev" denied the request: stage-1 webhook: key secret is not allowed\'.',
      "hook.log has each review the apiservers sent. The script ends with the demo's bash, and so the",
      'last line removes its configuration.',
    ],
    cites: [
      APISERVER(
        'pkg/util/webhook/client.go',
        237,
        'cfg.Host = u.Scheme + "://" + u.Host',
        'clientConfig.url: the apiserver dials that host itself, no Service to resolve',
      ),
      KUBERNETES(
        'pkg/apis/certificates/helpers.go',
        74,
        'if len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {',
        'the kubelet-serving signer takes an IP SAN as well as a DNS one',
      ),
      APISERVER(
        'pkg/admission/plugin/webhook/errors/statuserror.go',
        29,
        'deniedBy := fmt.Sprintf("admission webhook %q denied the request", webhookName)',
        "the script's allowed: false and its message, as kubectl shows them",
      ),
    ],
    async check(env) {
      return [
        ...expectThat(
          (await getObj(env, core(env, 'configmaps', 'stage1-before'))) !== undefined,
          'configmap stage1-before (a key "secret", before the edit) is not in api-lab',
        ),
        ...(await liveBefore(env, 'stage1-forbidden', 'stage1-before')),
        ...(await refusedWith(
          env,
          'stage1-after',
          'admission webhook "stage1.webhook.hardwire.dev" denied the request: stage-1 webhook: key secret is not allowed',
        )),
        ...(await absent(env, 'stage1-after')),
        ...(await noWebhookConfig(env, 'learn-stage1')),
      ];
    },
  },
  {
    id: '3.3g',
    section: SECTION,
    title: 'a webhook that must run twice: reinvocationPolicy IfNeeded',
    task: [
      'Two mutating webhooks served by one script on this machine (as in 3.3f): "summarise" writes',
      'the sorted data keys into an annotation, "add" adds a data key. summarise runs first, so its',
      'summary is stale unless it is called again: give it reinvocationPolicy IfNeeded. Create a',
      "labelled ConfigMap; read its annotation, the script's log and the create's audit annotations.",
    ],
    commands: [
      ADDR_LINE,
      ...issue('mutate', 'learn-reinvoke', 'IP:$ADDR'),
      `cat > mutate.py <<'EOF'
import base64, json, ssl, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["request"]
        obj = req["object"]
        data = obj.get("data") or {}
        if self.path.startswith("/summarise"):
            notes = dict(obj["metadata"].get("annotations") or {})
            notes["learn.hardwire.dev/keys"] = ",".join(sorted(data))
            patch = [{"op": "add", "path": "/metadata/annotations", "value": notes}]
        else:
            patch = [] if "added" in data else [{"op": "add", "path": "/data/added", "value": "by the second webhook"}]
        print("review", self.path.split("?")[0], "uid=" + req["uid"], req["name"], "keys=" + ",".join(sorted(data)), flush=True)
        resp = {"uid": req["uid"], "allowed": True}
        if patch:
            resp.update(patchType="JSONPatch", patch=base64.b64encode(json.dumps(patch).encode()).decode())
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

srv = HTTPServer((sys.argv[1], ${REINVOKE_PORT}), Hook)
tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
tls.load_cert_chain("mutate.crt", "mutate.key")
srv.socket = tls.wrap_socket(srv.socket, server_side=True)
print("listening on https://%s:${REINVOKE_PORT}" % sys.argv[1], flush=True)
srv.serve_forever()
EOF`,
      `python3 mutate.py $ADDR >> mutate.log 2>&1 & until curl -sk -o /dev/null https://$ADDR:${REINVOKE_PORT}/; do sleep 0.2; done; cat mutate.log`,
      `CA=$(kubectl get configmap kube-root-ca.crt -n api-lab -o jsonpath='{.data.ca\\.crt}' | base64 -w0)`,
      `kubectl apply -f - <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: learn-reinvoke}
webhooks:
- name: summarise.webhook.hardwire.dev
  reinvocationPolicy: IfNeeded
  clientConfig: {url: "https://$ADDR:${REINVOKE_PORT}/summarise", caBundle: $CA}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 5
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: api-lab}}
  objectSelector: {matchLabels: {${LABEL}: reinvoke}}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps], scope: Namespaced}
- name: add.webhook.hardwire.dev
  reinvocationPolicy: Never
  clientConfig: {url: "https://$ADDR:${REINVOKE_PORT}/add", caBundle: $CA}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 5
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: api-lab}}
  objectSelector: {matchLabels: {${LABEL}: reinvoke}}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps], scope: Namespaced}
EOF`,
      cmFile('reinvoked-cm', 'reinvoke', '{first: "yes"}'),
      `for i in $(seq 30); do kubectl create -n api-lab -f reinvoked-cm.yaml --dry-run=server -o jsonpath='{.data}' | grep -q added && break; sleep 1; done`,
      `kubectl create -n api-lab -f reinvoked-cm.yaml -o jsonpath='{.metadata.annotations}{"\\n"}{.data}{"\\n"}'`,
      "grep ' reinvoked-cm ' mutate.log | tail -3",
      'kubectl delete mutatingwebhookconfiguration learn-reinvoke',
    ],
    reset: [
      'kubectl delete mutatingwebhookconfiguration learn-reinvoke --ignore-not-found',
      'kubectl delete csr learn-reinvoke --ignore-not-found',
      'kubectl delete configmap reinvoked-cm -n api-lab --ignore-not-found',
    ],
    watch: [
      'The stored annotation is learn.hardwire.dev/keys: added,first, though summarise ran before',
      '"added" existed. The log has three calls for the create: /summarise keys=first, /add',
      'keys=first, then /summarise again with keys=added,first: add changed the object, so the',
      'IfNeeded webhook was called a second time (add, Never, was not). The audit event of the create',
      'holds mutation.webhook.admission.k8s.io/round_1_index_0 for summarise: round 1 is the',
      'reinvocation.',
    ],
    cites: [
      APISERVER(
        'pkg/admission/plugin/webhook/mutating/dispatcher.go',
        195,
        'reinvokeCtx.SetShouldReinvoke()',
        "a webhook's patch changed the object: admission will run the mutating plugins again",
      ),
      APISERVER(
        'pkg/admission/plugin/webhook/mutating/dispatcher.go',
        197,
        'if hook.ReinvocationPolicy != nil && *hook.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy {',
        'only a webhook with IfNeeded is remembered as one to call again',
      ),
      APISERVER(
        'pkg/admission/plugin/webhook/mutating/dispatcher.go',
        150,
        'if reinvokeCtx.IsReinvoke() && !webhookReinvokeCtx.ShouldReinvokeWebhook(invocation.Webhook.GetUID()) {',
        'in the second round, the others are skipped',
      ),
      APISERVER(
        'pkg/admission/plugin/webhook/mutating/dispatcher.go',
        408,
        'mutationAnnotationKey:   fmt.Sprintf("%sround_%d_index_%d", MutationAuditAnnotationPrefix, round, idx),',
        'the audit annotation that names each call by round: round_1 is the reinvocation',
      ),
    ],
    async check(env) {
      const cm = await getObj(env, core(env, 'configmaps', 'reinvoked-cm'));
      const keys = Object.keys(cm?.data ?? {})
        .sort()
        .join(',');
      const events = (await env.audit('"name":"reinvoked-cm"')) as AuditDetail[];
      const made = events.findLast(
        (e) =>
          e.verb === 'create' &&
          e.responseStatus?.code === 201 &&
          !new URL(e.requestURI, 'https://x').searchParams.has('dryRun'),
      );
      const round1 = Object.entries(made?.annotations ?? {}).filter(([k]) =>
        k.startsWith('mutation.webhook.admission.k8s.io/round_1_'),
      );
      return [
        ...expectThat(cm !== undefined, 'configmap reinvoked-cm is not in api-lab'),
        ...expectThat(
          cm?.data?.added !== undefined,
          'configmap reinvoked-cm has no key "added": the second webhook did not run',
        ),
        ...expectThat(
          cm?.metadata.annotations?.['learn.hardwire.dev/keys'] === keys,
          `its annotation learn.hardwire.dev/keys is ${JSON.stringify(cm?.metadata.annotations?.['learn.hardwire.dev/keys'] ?? null)}, not its keys ${keys}: summarise was not called again after add`,
        ),
        ...expectThat(
          round1.some(([, v]) => v.includes('summarise.webhook.hardwire.dev')),
          `the audit event of its create has no round_1 mutation annotation for summarise.webhook.hardwire.dev (${
            made
              ? Object.keys(made.annotations ?? {})
                  .filter((k) => k.startsWith('mutation.'))
                  .join(', ') || 'none'
              : 'no stored create'
          })`,
        ),
        ...expectThat(
          (await getObj(
            env,
            '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/learn-reinvoke',
          )) === undefined,
          'mutatingwebhookconfiguration learn-reinvoke (failurePolicy Fail, its server gone) is still on the cluster',
        ),
      ];
    },
  },
];
