// The capstone: three webhooks on the cluster at once, each hardwire.local/webhook in a Deployment
// of its own behind a Service, each with a serving certificate from the certificates API (3.3a's
// way; cert-manager, which the curriculum names, is not served here): a mutating webhook that
// labels a Thermo, a validating one that admits it only when labelled, and the conversion webhook
// of the Thermo CRD (v2 served, v1 stored). Then `hardwire trace apply --capstone` creates one
// Thermo through a debug kube-apiserver under delve and names where it called each of the three.
// The webhooks are left running: scoped to Thermos in api-lab, they touch nothing else.
import {
  CAPSTONE_CRD,
  CAPSTONE_GROUP,
  CAPSTONE_NS,
  MUTATED_LABEL,
  MUTATING_CONFIGURATION,
  VALIDATING_CONFIGURATION,
} from '../trace/index.ts';
import { APIEXTENSIONS, APISERVER } from './cites.ts';
import { issue, untilLive, webhookApp } from './lines.ts';
import { core, expectThat, getObj, type Obj } from './read.ts';
import type { Exercise, Findings, LearnEnv } from './types.ts';

const NS = CAPSTONE_NS;
const PATHS = ['mutate', 'validate', 'convert'] as const;
type Path = (typeof PATHS)[number];
const svc = (p: Path) => `capstone-${p}`;
const SKIP = 'learn.hardwire.dev/skip-mutation';
const NOT_MUTATED = `hardwire webhook: not labelled ${MUTATED_LABEL} (the mutating webhook did not run on it)`;
const THERMOS = (v: string) => `/apis/${CAPSTONE_GROUP}/${v}/namespaces/${NS}/thermos`;
const CA_LINE = `CA=$(kubectl get configmap kube-root-ca.crt -n ${NS} -o jsonpath='{.data.ca\\.crt}' | base64 -w0)`;
const client = (p: Path) =>
  `{service: {namespace: ${NS}, name: ${svc(p)}, path: /${p}, port: 443}, caBundle: $CA}`;

const deployment = (p: Path) => webhookApp(svc(p));

const thermo = (name: string, value: number, labels = '') => `cat > thermo-${name}.yaml <<'EOF'
apiVersion: ${CAPSTONE_GROUP}/v2
kind: Thermo
metadata: {name: ${name}, namespace: ${NS}${labels ? `, labels: {${labels}}` : ''}}
spec: {temperature: {value: ${value}, unit: F}}
EOF`;

const RULES = `rules:
  - {apiGroups: [${CAPSTONE_GROUP}], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [thermos], scope: Namespaced}
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ${NS}}}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 5`;

/** The three webhooks' Pods' logs, read through the API, by path; undefined when a Deployment has no Pod. */
async function podLogs(env: LearnEnv): Promise<Record<Path, string | undefined>> {
  const out = {} as Record<Path, string | undefined>;
  for (const p of PATHS) {
    const pods = await env.api<{ items?: Obj[] }>(
      'GET',
      `${core(env, 'pods')}?labelSelector=${encodeURIComponent(`app=${svc(p)}`)}`,
    );
    let text: string | undefined;
    for (const pod of pods.json.items ?? []) {
      const r = await env.api<string>('GET', `${core(env, 'pods', pod.metadata.name)}/log`);
      if (r.status === 200) text = (text ?? '') + (typeof r.json === 'string' ? r.json : '');
    }
    out[p] = text;
  }
  return out;
}

interface Thermo extends Obj {
  spec?: { celsius?: number; temperature?: { value?: number; unit?: string } };
}

interface Crd extends Obj {
  spec?: {
    conversion?: {
      strategy?: string;
      webhook?: { clientConfig?: { service?: { name?: string; namespace?: string } } };
    };
  };
}

/** A Thermo as stored, read at v1: labelled by the mutating webhook, in celsius. */
async function storedThermo(env: LearnEnv, name: string, celsius: number): Promise<Findings> {
  const t = await getObj<Thermo>(env, `${THERMOS('v1')}/${name}`);
  if (!t) return [`thermo ${name} is not in ${NS}`];
  const raw = await env.etcdctl([
    'get',
    `/registry/${CAPSTONE_GROUP}/thermos/${NS}/${name}`,
    '--print-value-only',
  ]);
  return [
    ...expectThat(
      t.metadata.labels?.[MUTATED_LABEL] === 'true',
      `thermo ${name} has no label ${MUTATED_LABEL}: the mutating webhook did not run on its create`,
    ),
    ...expectThat(
      t.spec?.celsius === celsius,
      `thermo ${name} read at v1 has spec ${JSON.stringify(t.spec)}, not {"celsius":${celsius}}: the conversion webhook did not convert it`,
    ),
    ...expectThat(
      raw.includes(`"apiVersion":"${CAPSTONE_GROUP}/v1"`),
      `etcd does not hold thermo ${name} as ${CAPSTONE_GROUP}/v1, the stored version`,
    ),
  ];
}

export const CAPSTONE: Exercise[] = [
  {
    id: 'capstone',
    section: 'Capstone: three webhooks at once',
    title:
      'a mutating, a validating and a conversion webhook on the cluster, and a create traced through all three',
    task: [
      'Run three webhooks behind Services in api-lab, each with a serving certificate from a CSR to',
      'kubernetes.io/kubelet-serving (as in 3.3a): a mutating one that labels a Thermo, a validating one',
      `that refuses a Thermo the mutating one did not label, and the conversion webhook of a CRD`,
      `${CAPSTONE_CRD} that serves v2 (temperature and unit) and stores v1 (celsius). Create a Thermo`,
      'at v2, another that skips the mutating webhook, read the first at v1 and in etcd, then trace a',
      'third create through a debug kube-apiserver: where did it call each webhook?',
    ],
    commands: [
      `kubectl create namespace ${NS} --dry-run=client -o yaml | kubectl apply -f -`,
      ...PATHS.flatMap((p) => [
        ...issue(svc(p), `learn-${svc(p)}`, `DNS:${svc(p)}.${NS}.svc`),
        `kubectl create secret tls ${svc(p)}-tls -n ${NS} --cert=${svc(p)}.crt --key=${svc(p)}.key`,
      ]),
      `kubectl apply -n ${NS} -f - <<'EOF'\n${PATHS.map(deployment).join('\n---\n')}\nEOF`,
      `for p in ${PATHS.join(' ')}; do kubectl rollout status deploy/capstone-$p -n ${NS} --timeout=120s; done`,
      CA_LINE,
      `kubectl apply -f - <<EOF
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ${CAPSTONE_CRD}}
spec:
  group: ${CAPSTONE_GROUP}
  scope: Namespaced
  names: {plural: thermos, singular: thermo, kind: Thermo}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: ${client('convert')}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {celsius: {type: number}}}}}}
  - name: v2
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {temperature: {type: object, properties: {value: {type: number}, unit: {type: string, enum: [C, F]}}}}}}}}
EOF`,
      `kubectl wait --for condition=established crd/${CAPSTONE_CRD} --timeout=60s`,
      `kubectl apply -f - <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: ${MUTATING_CONFIGURATION}}
webhooks:
- name: label.capstone.hardwire.dev
  clientConfig: ${client('mutate')}
  objectSelector: {matchExpressions: [{key: ${SKIP}, operator: DoesNotExist}]}
  reinvocationPolicy: Never
  ${RULES}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: ${VALIDATING_CONFIGURATION}}
webhooks:
- name: labelled.capstone.hardwire.dev
  clientConfig: ${client('validate')}
  ${RULES}
EOF`,
      thermo('hot', 98.6),
      thermo('raw', 212, `${SKIP}: "true"`),
      thermo('traced', 451),
      untilLive(
        `kubectl create -f thermo-hot.yaml --dry-run=server -o jsonpath='{.metadata.labels}' 2>&1 | grep -q mutated`,
      ),
      untilLive(`kubectl create -f thermo-raw.yaml --dry-run=server 2>&1 | grep -q 'not labelled'`),
      'kubectl create -f thermo-hot.yaml',
      'kubectl create -f thermo-raw.yaml',
      `kubectl get thermos.v1.${CAPSTONE_GROUP} hot -n ${NS} -o jsonpath='{.metadata.labels} {.spec}{"\\n"}'`,
      `kubectl get thermos.v2.${CAPSTONE_GROUP} hot -n ${NS} -o jsonpath='{.spec}{"\\n"}'`,
      `etcdctl get /registry/${CAPSTONE_GROUP}/thermos/${NS}/hot --print-value-only; echo`,
      'hardwire trace apply --capstone -f thermo-traced.yaml --md capstone-trace.md | tail -n 3',
      `for p in ${PATHS.join(' ')}; do kubectl logs -n ${NS} deploy/capstone-$p | grep -E '${NS}/(hot|raw|traced)'; done`,
    ],
    reset: [
      `kubectl delete mutatingwebhookconfiguration ${MUTATING_CONFIGURATION} --ignore-not-found`,
      `kubectl delete validatingwebhookconfiguration ${VALIDATING_CONFIGURATION} --ignore-not-found`,
      `kubectl delete crd ${CAPSTONE_CRD} --ignore-not-found`,
      `kubectl delete csr ${PATHS.map((p) => `learn-${svc(p)}`).join(' ')} --ignore-not-found`,
      `kubectl delete -n ${NS} ${PATHS.map((p) => `deployment/${svc(p)} service/${svc(p)} secret/${svc(p)}-tls`).join(' ')} --ignore-not-found`,
    ],
    watch: [
      'Each certificate is issued by the cluster CA for its Service. hot is created: read at v1 it has',
      `the label ${MUTATED_LABEL}=true and {"celsius":37}, at v2 {"temperature":{"unit":"C",`,
      `"value":37}} (the round trip loses Fahrenheit), and etcd holds it as ${CAPSTONE_GROUP}/v1. raw is`,
      `refused: '... denied the request: ${NOT_MUTATED}': validation saw the object as mutation left it.`,
      "The trace names three call outs, each the frame that called client-go's Request.Do: in the",
      'mutating dispatcher, in the validating dispatcher (on a goroutine of its own), and in the',
      "CRD's webhookConverter, inside etcd3 store.Create's encode to v1. Each Pod's log has traced.",
    ],
    cites: [
      APISERVER(
        'pkg/endpoints/handlers/create.go',
        203,
        'if err := mutatingAdmission.Admit(ctx, admissionAttributes, scope); err != nil {',
        'mutating admission runs first, in the create handler; validation is handed to the registry after it',
      ),
      APISERVER(
        'pkg/admission/plugin/webhook/mutating/dispatcher.go',
        297,
        'do := func() { err = r.Do(ctx).Into(response) }',
        'where the apiserver calls a mutating webhook',
      ),
      APISERVER(
        'pkg/admission/plugin/webhook/validating/dispatcher.go',
        298,
        'do := func() { err = r.Do(ctx).Into(response) }',
        'where it calls a validating webhook (each on a goroutine of its own, in parallel)',
      ),
      APISERVER(
        'pkg/storage/etcd3/store.go',
        294,
        'data, err := runtime.Encode(s.codec, obj)',
        'the create is encoded to the stored version here, which for a CRD at v2 calls the conversion webhook',
      ),
      APIEXTENSIONS(
        'pkg/apiserver/conversion/webhook_converter.go',
        282,
        'r := c.restClient.Post().Body(request).Do(ctx)',
        'where it calls the conversion webhook',
      ),
    ],
    async check(env) {
      const deployments = await Promise.all(
        PATHS.map((p) =>
          getObj<Obj & { status?: { availableReplicas?: number } }>(
            env,
            `/apis/apps/v1/namespaces/${NS}/deployments/${svc(p)}`,
          ),
        ),
      );
      const findings: Findings = PATHS.flatMap((p, i) =>
        expectThat(
          (deployments[i]?.status?.availableReplicas ?? 0) > 0,
          `deployment ${svc(p)} in ${NS} has no available Pod`,
        ),
      );
      const crd = await getObj<Crd>(
        env,
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CAPSTONE_CRD}`,
      );
      const conv = crd?.spec?.conversion;
      findings.push(
        ...expectThat(
          conv?.strategy === 'Webhook' &&
            conv.webhook?.clientConfig?.service?.name === svc('convert'),
          `crd ${CAPSTONE_CRD} ${crd ? `converts by ${conv?.strategy ?? 'None'}${conv?.webhook?.clientConfig?.service ? ` through service ${conv.webhook.clientConfig.service.name}` : ''}` : 'is not on the cluster'}, not by Webhook through service ${svc('convert')}`,
        ),
      );
      for (const [kind, name] of [
        ['mutatingwebhookconfigurations', MUTATING_CONFIGURATION],
        ['validatingwebhookconfigurations', VALIDATING_CONFIGURATION],
      ] as const)
        findings.push(
          ...expectThat(
            (await getObj(env, `/apis/admissionregistration.k8s.io/v1/${kind}/${name}`)) !==
              undefined,
            `${kind.replace(/s$/, '')} ${name} is not on the cluster`,
          ),
        );
      if (findings.length) return findings;
      findings.push(...(await storedThermo(env, 'hot', 37)));
      const refused = (await env.audit(`"name":"raw"`)).filter(
        (e) =>
          e.verb === 'create' &&
          e.objectRef?.resource === 'thermos' &&
          !new URL(e.requestURI, 'https://x').searchParams.has('dryRun'),
      );
      findings.push(
        ...expectThat(
          refused.some((e) => (e.responseStatus?.message ?? '').includes(NOT_MUTATED)),
          `the audit log shows no create of thermo raw refused with ${JSON.stringify(NOT_MUTATED)}`,
        ),
        ...expectThat(
          (await getObj(env, `${THERMOS('v1')}/raw`)) === undefined,
          'thermo raw is stored: the validating webhook did not refuse it',
        ),
      );
      // The traced create went through the debug apiserver: its own audit log is gone with it, so
      // the evidence is the object and the three webhooks' own logs.
      findings.push(...(await storedThermo(env, 'traced', 232.78)));
      const logs = await podLogs(env);
      const seen: Record<Path, RegExp> = {
        mutate: new RegExp(`review uid=\\S+ CREATE Thermo ${NS}/traced allowed=true patched`),
        validate: new RegExp(`review uid=\\S+ CREATE Thermo ${NS}/traced allowed=true`),
        convert: new RegExp(
          `convert uid=\\S+ ${NS}/traced ${CAPSTONE_GROUP}/v2 to ${CAPSTONE_GROUP}/v1`,
        ),
      };
      for (const p of PATHS)
        findings.push(
          ...expectThat(
            seen[p].test(logs[p] ?? ''),
            `the ${svc(p)} Pod's log has no line for the traced create (${seen[p].source}): run hardwire trace apply --capstone -f thermo-traced.yaml`,
          ),
        );
      return findings;
    },
  },
];
