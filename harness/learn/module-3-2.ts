// Module 3.2 of the curriculum, admission with no webhook: the defaults admission adds (seen with a
// server dry run, gone with a client one), mutating before validating, the in-tree plugins called
// again after a policy mutated, and a CEL rejection made inside the apiserver. The policies are
// MutatingAdmissionPolicy (GA in v1.36) and ValidatingAdmissionPolicy, bound to objects that carry a
// learn.hardwire.dev label in api-lab only, so no other exercise's objects are touched.
import { APISERVER, KUBERNETES } from './cites.ts';
import {
  core,
  createdAt,
  expectThat,
  getObj,
  recorded,
  requested,
  type AuditDetail,
  type Obj,
} from './read.ts';
import type { Exercise, LearnEnv } from './types.ts';
import { untilLive } from './lines.ts';

const SECTION = 'Module 3.2: admission';

const SA_MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

interface PodSpec extends Obj {
  spec: { containers: { name: string; volumeMounts?: { mountPath: string }[] }[] };
}

/** Findings for policies and bindings of these names that are not on the cluster. */
async function policies(
  env: LearnEnv,
  kind: 'mutatingadmissionpolicies' | 'validatingadmissionpolicies',
  name: string,
): Promise<string[]> {
  const base = '/apis/admissionregistration.k8s.io/v1';
  const binding = kind.replace('policies', 'policybindings');
  return [
    ...expectThat(
      (await getObj(env, `${base}/${kind}/${name}`)) !== undefined,
      `${kind} ${name} is not on the cluster`,
    ),
    ...expectThat(
      (await getObj(env, `${base}/${binding}/${name}`)) !== undefined,
      `${binding} ${name} is not on the cluster`,
    ),
  ];
}

/** A claim recorded before the proof: both created, the claim first (audit log time). */
async function claimedFirst(
  env: LearnEnv,
  claim: string,
  resource: string,
  proof: string,
): Promise<string[]> {
  const c = await createdAt(env, 'configmaps', claim);
  const p = await createdAt(env, resource, proof);
  if (!c) return [`the audit log shows no create of the claim, configmap ${claim}`];
  if (!p) return [`the audit log shows no create of ${resource} ${proof}`];
  return expectThat(c < p, `the claim ${claim} was made after ${proof}, not before`);
}

export const MODULE_3_2: Exercise[] = [
  {
    id: '3.2a',
    section: SECTION,
    title: 'admission defaults that appear and vanish with one flag',
    task: [
      'Print the same Pod with --dry-run=client and with --dry-run=server. Only the server runs',
      'defaulting and admission; nothing is stored either way.',
    ],
    commands: [
      `kubectl run adm-probe -n api-lab --image=busybox --dry-run=client -o yaml -- sleep 3600 | grep -E 'tolerationSeconds|kube-api-access|serviceAccountName|terminationMessagePath' || echo '(none of them)'`,
      `kubectl run adm-probe -n api-lab --image=busybox --dry-run=server -o yaml -- sleep 3600 | grep -E 'tolerationSeconds|kube-api-access|serviceAccountName|terminationMessagePath'`,
      'kubectl get pod adm-probe -n api-lab',
    ],
    watch: [
      'The server copy has tolerations for not-ready and unreachable with tolerationSeconds 300',
      '(DefaultTolerationSeconds), serviceAccountName default and a kube-api-access volume',
      '(ServiceAccount), and terminationMessagePath (defaulting, before admission). The client copy',
      'has none; and the Pod is NotFound: the dry run went through admission, not into etcd.',
    ],
    cites: [
      KUBERNETES(
        'plugin/pkg/admission/defaulttolerationseconds/admission.go',
        103,
        'TolerationSeconds: &notReadyTolerationSeconds,',
        'the not-ready toleration, 300 s, added to every Pod that has none',
      ),
      KUBERNETES(
        'plugin/pkg/admission/serviceaccount/admission.go',
        157,
        'pod.Spec.ServiceAccountName = DefaultServiceAccountName',
        'the ServiceAccount plugin names the default account, then mounts its token',
      ),
      APISERVER(
        'pkg/registry/generic/registry/store.go',
        534,
        'dryrun.IsDryRun(options.DryRun)',
        'a dry run goes through admission and the strategy, and the storage is told not to write',
      ),
    ],
    async check(env) {
      return [
        ...(await requested(env, [
          {
            verb: 'create',
            resource: 'pods',
            name: 'adm-probe',
            agent: 'kubectl',
            query: { dryRun: 'All' },
            code: 201,
          },
        ])),
        ...expectThat(
          (await getObj(env, core(env, 'pods', 'adm-probe'))) === undefined,
          'a pod adm-probe is stored: the dry run was not a dry run',
        ),
      ];
    },
  },
  {
    id: '3.2b',
    section: SECTION,
    title: 'mutating, then validating: the guarantee claimed, then watched',
    task: [
      'A MutatingAdmissionPolicy stamps a label on ConfigMaps labelled learn.hardwire.dev/mv; a',
      'ValidatingAdmissionPolicy refuses those without the stamp. Claim first (a ConfigMap mv-claim)',
      'what a create without the stamp does, then create one, then try to remove the stamp.',
    ],
    commands: [
      `kubectl apply -f - <<'EOF'
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: learn-stamp}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"]}
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"learn.hardwire.dev/stamped": "true"}}}'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: learn-stamp}
spec:
  policyName: learn-stamp
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: api-lab}}
    objectSelector: {matchExpressions: [{key: learn.hardwire.dev/mv, operator: Exists}]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: learn-require-stamp}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"]}
  failurePolicy: Fail
  validations:
  - expression: "object.metadata.?labels[?'learn.hardwire.dev/stamped'].orValue('') == 'true'"
    message: no learn.hardwire.dev/stamped=true label
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: learn-require-stamp}
spec:
  policyName: learn-require-stamp
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: api-lab}}
    objectSelector: {matchExpressions: [{key: learn.hardwire.dev/mv, operator: Exists}]}
EOF`,
      `kubectl create configmap mv-claim -n api-lab --from-literal=claim='created without the stamp, mv-1 is admitted: the validating policy sees the mutating policy'"'"'s label'`,
      `cat > mv-1.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: mv-1, labels: {learn.hardwire.dev/mv: "yes"}}
data: {sent: without the stamp}
EOF`,
      untilLive(
        `kubectl create -n api-lab -f mv-1.yaml --dry-run=server -o jsonpath='{.metadata.labels}' | grep -q stamped`,
      ),
      `kubectl create -n api-lab -f mv-1.yaml -o jsonpath='{.metadata.labels}{"\\n"}'`,
      'kubectl label configmap mv-1 -n api-lab learn.hardwire.dev/stamped=false --overwrite',
    ],
    reset: ['kubectl delete configmap mv-1 mv-claim -n api-lab --ignore-not-found'],
    watch: [
      'The create is admitted with the stamp the client never sent: validation ran on the mutated',
      'object. The relabel (an UPDATE, which the mutating policy does not match) is refused, 422:',
      '"ValidatingAdmissionPolicy \'learn-require-stamp\' ... denied request".',
    ],
    cites: [
      APISERVER(
        'pkg/endpoints/handlers/create.go',
        203,
        'mutatingAdmission.Admit(ctx, admissionAttributes, scope)',
        'every mutating plugin runs first, in the handler',
      ),
      APISERVER(
        'pkg/registry/generic/registry/store.go',
        515,
        'createValidation(ctx, obj.DeepCopyObject())',
        'then the validating ones, in the store, on the fully formed object',
      ),
      KUBERNETES(
        'pkg/kubeapiserver/options/plugins.go',
        114,
        'mutatingadmissionpolicy.PluginName,   // MutatingAdmissionPolicy',
        'the plugin order: MutatingAdmissionPolicy before ValidatingAdmissionPolicy',
      ),
    ],
    async check(env) {
      const mv = await getObj(env, core(env, 'configmaps', 'mv-1'));
      return [
        ...(await policies(env, 'mutatingadmissionpolicies', 'learn-stamp')),
        ...(await policies(env, 'validatingadmissionpolicies', 'learn-require-stamp')),
        ...expectThat(
          mv?.metadata.labels?.['learn.hardwire.dev/stamped'] === 'true',
          'configmap mv-1 is missing or not stamped',
        ),
        ...(await claimedFirst(env, 'mv-claim', 'configmaps', 'mv-1')),
        ...(await requested(env, [
          { verb: 'patch', resource: 'configmaps', name: 'mv-1', code: 422 },
        ])),
      ];
    },
  },
  {
    id: '3.2c',
    section: SECTION,
    title: 'reinvocation, claimed before it is seen',
    task: [
      'A MutatingAdmissionPolicy adds a container "tail" to Pods labelled learn.hardwire.dev/sidecar.',
      'The ServiceAccount plugin, which mounts the token into every container, runs before it.',
      'Claim (a ConfigMap reinvoke-claim) whether "tail" gets the token mount, then see.',
    ],
    commands: [
      `kubectl apply -f - <<'EOF'
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: learn-add-sidecar}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}
  matchConditions:
  - name: no-tail-yet
    expression: "!object.spec.containers.exists(c, c.name == 'tail')"
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: >
        [JSONPatch{op: "add", path: "/spec/containers/-", value: Object.spec.containers{name: "tail", image: "busybox", command: ["sleep", "3600"]}}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: learn-add-sidecar}
spec:
  policyName: learn-add-sidecar
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: api-lab}}
    objectSelector: {matchLabels: {learn.hardwire.dev/sidecar: "yes"}}
EOF`,
      `kubectl create configmap reinvoke-claim -n api-lab --from-literal=claim='tail gets the token mount: the policy changed the object, so the in-tree plugins run again'`,
      untilLive(
        `kubectl run reinvoked -n api-lab --image=busybox --labels=learn.hardwire.dev/sidecar=yes --dry-run=server -o jsonpath='{.spec.containers[*].name}' -- sleep 3600 | grep -q tail`,
      ),
      'kubectl run reinvoked -n api-lab --image=busybox --labels=learn.hardwire.dev/sidecar=yes -- sleep 3600',
      `kubectl get pod reinvoked -n api-lab -o jsonpath='{range .spec.containers[*]}{.name}: {.volumeMounts[*].mountPath}{"\\n"}{end}'`,
    ],
    reset: [
      'kubectl delete pod reinvoked -n api-lab --ignore-not-found --grace-period=1',
      'kubectl delete configmap reinvoke-claim -n api-lab --ignore-not-found',
    ],
    watch: [
      `Both containers mount ${SA_MOUNT}. The ServiceAccount plugin ran before the policy`,
      'added "tail"; the policy changed the object, so admission ran the in-tree plugins a second',
      'time, and the second ServiceAccount pass mounted the token into "tail" too.',
    ],
    cites: [
      APISERVER(
        'pkg/admission/plugin/policy/mutating/dispatcher.go',
        211,
        'reinvokeCtx.SetShouldReinvoke()',
        'a policy that changed the object asks for reinvocation',
      ),
      APISERVER(
        'pkg/admission/reinvocation.go',
        44,
        'Calling admit a second time will reinvoke all in-tree plugins',
        'the whole mutating chain runs again: every in-tree plugin',
      ),
      KUBERNETES(
        'plugin/pkg/admission/serviceaccount/admission.go',
        458,
        'for i, container := range pod.Spec.Containers {',
        'the ServiceAccount plugin mounts the token into each container that lacks it',
      ),
      KUBERNETES(
        'pkg/kubeapiserver/options/plugins.go',
        81,
        'serviceaccount.PluginName,               // ServiceAccount',
        'ServiceAccount comes before MutatingAdmissionPolicy in the order',
      ),
    ],
    async check(env) {
      const p = await getObj<PodSpec>(env, core(env, 'pods', 'reinvoked'));
      const tail = p?.spec.containers.find((c) => c.name === 'tail');
      return [
        ...(await policies(env, 'mutatingadmissionpolicies', 'learn-add-sidecar')),
        ...expectThat(tail !== undefined, 'pod reinvoked is missing or has no container "tail"'),
        ...expectThat(
          tail?.volumeMounts?.some((m) => m.mountPath === SA_MOUNT) === true,
          `"tail" does not mount ${SA_MOUNT}`,
        ),
        ...expectThat(
          (await recorded(env, 'reinvoke-claim')) !== undefined,
          'configmap reinvoke-claim is not in api-lab',
        ),
        ...(await claimedFirst(env, 'reinvoke-claim', 'pods', 'reinvoked')),
      ];
    },
  },
  {
    id: '3.2d',
    section: SECTION,
    title: 'a rejection with no network hop: ValidatingAdmissionPolicy and CEL',
    task: [
      'Refuse ConfigMaps labelled learn.hardwire.dev/vap with more than two data keys, with a',
      'ValidatingAdmissionPolicy and its binding; try one with three. No webhook is configured.',
    ],
    commands: [
      `kubectl apply -f - <<'EOF'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: learn-max-keys}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"]}
  failurePolicy: Fail
  validations:
  - expression: "!has(object.data) || size(object.data) <= 2"
    message: at most 2 data keys
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: learn-max-keys}
spec:
  policyName: learn-max-keys
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: api-lab}}
    objectSelector: {matchExpressions: [{key: learn.hardwire.dev/vap, operator: Exists}]}
EOF`,
      `cat > too-many.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: too-many, labels: {learn.hardwire.dev/vap: "yes"}}
data: {a: "1", b: "2", c: "3"}
EOF`,
      untilLive('! kubectl create -n api-lab -f too-many.yaml --dry-run=server >/dev/null 2>&1'),
      'kubectl create -n api-lab -f too-many.yaml',
      'kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations',
    ],
    watch: [
      "\"ValidatingAdmissionPolicy 'learn-max-keys' with binding 'learn-max-keys' denied request: at",
      'most 2 data keys", 422: the CEL program ran inside the apiserver; there is no webhook to call.',
    ],
    cites: [
      APISERVER(
        'pkg/admission/plugin/policy/validating/dispatcher.go',
        294,
        "ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s",
        'the message of a Deny',
      ),
    ],
    async check(env) {
      const events = (await env.audit('"name":"too-many"')) as AuditDetail[];
      return [
        ...(await policies(env, 'validatingadmissionpolicies', 'learn-max-keys')),
        ...expectThat(
          events.some(
            (e) =>
              e.verb === 'create' &&
              e.responseStatus?.code === 422 &&
              (e.responseStatus.message ?? '').includes(
                "ValidatingAdmissionPolicy 'learn-max-keys'",
              ),
          ),
          "the audit log shows no create of too-many refused 422 by ValidatingAdmissionPolicy 'learn-max-keys'",
        ),
        ...expectThat(
          (await getObj(env, core(env, 'configmaps', 'too-many'))) === undefined,
          'configmap too-many was stored',
        ),
      ];
    },
  },
];
