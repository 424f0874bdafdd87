// Module 3.1 of the curriculum, the request's way in and the object's way down: how a URL is parsed
// (RequestInfo), resourceVersion as etcd's mod_revision, the protobuf envelope etcd holds, what the
// create strategy drops, and the same request refused at authentication, then at authorization.
// `etcdctl` in the commands is the first etcd host's (env.ts etcdctlShim), as `hardwire lab ssh` runs it.
import { APIMACHINERY, APISERVER, KUBERNETES } from './cites.ts';
import {
  core,
  expectThat,
  getObj,
  recorded,
  requested,
  type AuditDetail,
  type Obj,
} from './read.ts';
import type { Exercise, Findings, LearnEnv } from './types.ts';

const SECTION = 'Module 3.1: the request path and storage';

/** The four URLs of 3.1a, each with the method kubectl sends it with (`get --raw`: GET). */
const URLS = {
  u1: '/api/v1/namespaces/api-lab/pods/w1/log',
  u2: '/apis/apps/v1/namespaces/api-lab/deployments?watch=true',
  u3: '/api/v1/namespaces/api-lab',
  u4: '/api/v1/pods',
} as const;

/** How RequestInfo's result is written in the predictions: verb, resource[/subresource], namespace or "-". */
const parsed = (e: AuditDetail): string =>
  [
    e.verb,
    `${e.objectRef?.resource ?? ''}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`,
    e.objectRef?.namespace || '-',
  ].join(' ');

/** The stored value of a key as etcdctl -w json gives it. */
interface EtcdGet {
  kvs?: { key: string; mod_revision: number; create_revision: number; value: string }[];
}

async function etcdKey(env: LearnEnv, key: string): Promise<EtcdGet['kvs']> {
  return (JSON.parse(await env.etcdctl(['get', key, '-w', 'json'])) as EtcdGet).kvs;
}

interface StatusPod extends Obj {
  status: { phase?: string; message?: string; hostIP?: string };
}

export const MODULE_3_1: Exercise[] = [
  {
    id: '3.1a',
    section: SECTION,
    title: 'predict how four URLs are parsed, then see it',
    task: [
      'Write down, for each URL, the verb, resource/subresource and namespace RequestInfo makes of it',
      '(a ConfigMap url-predictions, keys u1..u4, "VERB RESOURCE[/SUB] NAMESPACE", "-" for none):',
      ...Object.entries(URLS).map(([k, u]) => `  ${k}: GET ${u}`),
      'Then send each as a user with no rights: the refusal names what RequestInfo parsed.',
    ],
    commands: [
      `kubectl create configmap url-predictions -n api-lab --from-literal=u1='get pods/log api-lab' --from-literal=u2='watch deployments api-lab' --from-literal=u3='get namespaces api-lab' --from-literal=u4='list pods -'`,
      ...Object.values(URLS).map((u) => `kubectl --as=nobody get --raw '${u}'`),
    ],
    reset: ['kubectl delete configmap url-predictions -n api-lab --ignore-not-found'],
    watch: [
      'Each is 403, and the message is built from the parsed request: "cannot get resource \\"pods/log\\"',
      '... in the namespace \\"api-lab\\"". watch=true turns get into watch; a name-less GET is list;',
      '/namespaces/api-lab is the namespace resource, and its own name is its namespace.',
    ],
    cites: [
      APISERVER(
        'pkg/endpoints/request/requestinfo.go',
        196,
        'requestInfo.Namespace = currentParts[1]',
        'after /namespaces/ the next part is the namespace, for the namespace resource too',
      ),
      APISERVER(
        'pkg/endpoints/request/requestinfo.go',
        214,
        'requestInfo.Subresource = requestInfo.Parts[2]',
        'resource/name/subresource: the third part is the subresource',
      ),
      APISERVER(
        'pkg/endpoints/request/requestinfo.go',
        242,
        'requestInfo.Verb = "watch"',
        'GET with watch=true is the verb watch',
      ),
      APISERVER(
        'pkg/endpoints/handlers/responsewriters/errors.go',
        76,
        'cannot %s resource %q in API group %q in the namespace %q',
        'the 403 message, made of the parsed attributes',
      ),
    ],
    async check(env) {
      const guess = await recorded(env, 'url-predictions');
      if (!guess)
        return ['configmap url-predictions is not in api-lab: write the predictions first'];
      const events = (await env.audit('"nobody"')) as AuditDetail[];
      const findings: Findings = [];
      for (const [k, u] of Object.entries(URLS)) {
        const e = events.find(
          (x) => x.impersonatedUser?.username === 'nobody' && x.requestURI === u,
        );
        if (!e) {
          findings.push(`the audit log shows no request for ${u} as nobody`);
          continue;
        }
        findings.push(
          ...expectThat(
            guess[k]?.trim() === parsed(e),
            `${k}: predicted "${guess[k] ?? ''}", the apiserver parsed "${parsed(e)}"`,
          ),
          ...expectThat(e.responseStatus?.code === 403, `${u} as nobody was not refused (403)`),
        );
      }
      return findings;
    },
  },
  {
    id: '3.1b',
    section: SECTION,
    title: "resourceVersion is etcd's mod_revision",
    task: [
      "Create a ConfigMap, read its resourceVersion, and read its key's mod_revision in etcd; change it",
      'and read both again. Record the pair in a ConfigMap rv-seen (not on the object itself: that',
      'would be a write, and a new revision).',
    ],
    commands: [
      'kubectl create configmap rv-demo -n api-lab --from-literal=v=1',
      `kubectl get configmap rv-demo -n api-lab -o jsonpath='{.metadata.resourceVersion}{"\\n"}'`,
      `etcdctl get /registry/configmaps/api-lab/rv-demo -w json | grep -o '"[a-z_]*revision":[0-9]*'`,
      `kubectl patch configmap rv-demo -n api-lab --type=merge -p '{"data":{"v":"2"}}' -o jsonpath='{.metadata.resourceVersion}{"\\n"}'`,
      `etcdctl get /registry/configmaps/api-lab/rv-demo -w json | grep -o '"[a-z_]*revision":[0-9]*'`,
      `kubectl create configmap rv-seen -n api-lab --from-literal=resourceVersion=$(kubectl get configmap rv-demo -n api-lab -o jsonpath='{.metadata.resourceVersion}') --from-literal=mod_revision=$(etcdctl get /registry/configmaps/api-lab/rv-demo -w json | grep -o '"mod_revision":[0-9]*' | cut -d: -f2)`,
    ],
    reset: ['kubectl delete configmap rv-demo rv-seen -n api-lab --ignore-not-found'],
    watch: [
      "The resourceVersion is the key's mod_revision, and the header's revision is etcd's whole",
      'store: create_revision stays, mod_revision moves with every write to the key.',
    ],
    cites: [
      APISERVER(
        'pkg/storage/etcd3/store.go',
        265,
        'err = s.decoder.Decode(data, out, getResp.KV.ModRevision)',
        "a read decodes the value with the key's ModRevision",
      ),
      APISERVER(
        'pkg/storage/api_object_versioner.go',
        42,
        'accessor.SetResourceVersion(versionString)',
        'which becomes metadata.resourceVersion',
      ),
    ],
    async check(env) {
      const seen = await recorded(env, 'rv-seen');
      const cm = await getObj(env, core(env, 'configmaps', 'rv-demo'));
      if (!seen || !cm) return ['configmaps rv-demo and rv-seen are not both in api-lab'];
      const kv = (await etcdKey(env, '/registry/configmaps/api-lab/rv-demo'))?.[0];
      return [
        ...expectThat(
          String(kv?.mod_revision) === cm.metadata.resourceVersion,
          `rv-demo's resourceVersion ${cm.metadata.resourceVersion} is not its key's mod_revision ${kv?.mod_revision}`,
        ),
        ...expectThat(
          seen.resourceVersion === cm.metadata.resourceVersion &&
            seen.mod_revision === cm.metadata.resourceVersion,
          `rv-seen records resourceVersion ${seen.resourceVersion} and mod_revision ${seen.mod_revision}, not both ${cm.metadata.resourceVersion}`,
        ),
        ...(await requested(env, [
          { verb: 'patch', resource: 'configmaps', name: 'rv-demo', code: 200 },
        ])),
      ];
    },
  },
  {
    id: '3.1c',
    section: SECTION,
    title: 'what is stored is not JSON',
    task: [
      "Read a ConfigMap's value raw from etcd, and a Secret's, and compare them with what the API",
      "serves. Record the stored value's first four bytes, in hex, in a ConfigMap stored-prefix.",
    ],
    commands: [
      'kubectl create configmap stored-demo -n api-lab --from-literal=greeting=hello',
      'etcdctl get /registry/configmaps/api-lab/stored-demo --print-value-only | head -c 48 | od -c | head -n 3',
      'kubectl get --raw /api/v1/namespaces/api-lab/configmaps/stored-demo | head -c 48; echo',
      'kubectl create secret generic stored-secret -n api-lab --from-literal=greeting=hello',
      'etcdctl get /registry/secrets/api-lab/stored-secret --print-value-only | head -c 32 | od -c | head -n 2',
      `kubectl create configmap stored-prefix -n api-lab --from-literal=hex=$(etcdctl get /registry/configmaps/api-lab/stored-demo --print-value-only | head -c 4 | od -An -tx1 | tr -d ' \\n')`,
    ],
    reset: [
      'kubectl delete configmap stored-demo stored-prefix -n api-lab --ignore-not-found',
      'kubectl delete secret stored-secret -n api-lab --ignore-not-found',
    ],
    watch: [
      'k 8 s \\0, then protobuf: the apiVersion and kind (v1, ConfigMap) as an envelope, then the',
      'object. The Secret starts k8s:enc:secretbox:v1:key1: it is encrypted at rest, the ConfigMap is not.',
    ],
    cites: [
      APIMACHINERY(
        'pkg/runtime/serializer/protobuf/protobuf.go',
        43,
        'protoEncodingPrefix = []byte{0x6b, 0x38, 0x73, 0x00}',
        'the four bytes k8s\\0 that start every protobuf-encoded object',
      ),
      KUBERNETES(
        'pkg/controlplane/apiserver/options/options.go',
        138,
        's.Etcd.DefaultStorageMediaType = "application/vnd.kubernetes.protobuf"',
        'kube-apiserver stores protobuf, not JSON',
      ),
      APISERVER(
        'pkg/server/options/encryptionconfig/config.go',
        63,
        'secretboxTransformerPrefixV1 = "k8s:enc:secretbox:v1:"',
        "the prefix of a value the secretbox provider encrypted (the lab's encryption config)",
      ),
    ],
    async check(env) {
      const rec = await recorded(env, 'stored-prefix');
      if (!rec) return ['configmap stored-prefix is not in api-lab'];
      const raw = await env.etcdctl([
        'get',
        '/registry/configmaps/api-lab/stored-demo',
        '--print-value-only',
      ]);
      const hex = Buffer.from(raw.slice(0, 4), 'latin1').toString('hex');
      return [
        ...expectThat(raw.length > 0, 'stored-demo has no key in etcd'),
        ...expectThat(
          hex === '6b387300',
          `stored-demo's value starts ${hex}, not k8s\\0 (6b387300)`,
        ),
        ...expectThat(
          rec.hex === hex,
          `stored-prefix records ${rec.hex}, the stored value starts ${hex}`,
        ),
      ];
    },
  },
  {
    id: '3.1d',
    section: SECTION,
    title: 'the fields the create strategy drops',
    task: [
      'Create a Pod with a status of your own (phase Succeeded, a message, a hostIP), and read back',
      'what was stored.',
    ],
    commands: [
      `kubectl create -n api-lab -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: status-drop
spec:
  containers: [{name: main, image: busybox, command: ["sleep", "3600"]}]
status:
  phase: Succeeded
  message: set by the client
  hostIP: 10.0.0.99
EOF`,
      `kubectl get pod status-drop -n api-lab -o jsonpath='phase={.status.phase} message={.status.message} hostIP={.status.hostIP} generation={.metadata.generation}{"\\n"}'`,
    ],
    reset: ['kubectl delete pod status-drop -n api-lab --ignore-not-found --grace-period=1'],
    watch: [
      'exit 0 and no warning, yet the status is Pending (soon Running, set by the kubelet), with no',
      'message and the real hostIP: the create strategy replaced the status whole, and set generation 1.',
    ],
    cites: [
      KUBERNETES(
        'pkg/registry/core/pod/strategy.go',
        90,
        'pod.Status = api.PodStatus{',
        "a created Pod's status is replaced: Pending, and its QoS class",
      ),
      APISERVER(
        'pkg/registry/generic/registry/store.go',
        509,
        'rest.BeforeCreate(e.CreateStrategy, ctx, obj)',
        'the store runs the strategy before it writes',
      ),
    ],
    async check(env) {
      const p = await getObj<StatusPod>(env, core(env, 'pods', 'status-drop'));
      if (!p) return ['pod status-drop is not in api-lab'];
      const events = (await env.audit('"name":"status-drop"')) as AuditDetail[];
      const sent = events.find((e) => e.verb === 'create' && e.responseStatus?.code === 201)
        ?.requestObject?.status as StatusPod['status'] | undefined;
      return [
        ...expectThat(
          sent?.message !== undefined,
          'the audit log shows no create of status-drop that sent a status',
        ),
        ...expectThat(
          p.status.message !== sent?.message && p.status.hostIP !== sent?.hostIP,
          "status-drop's stored status still holds what the client sent",
        ),
      ];
    },
  },
  {
    id: '3.1e',
    section: SECTION,
    title: 'the same request refused at authentication, then at authorization',
    task: [
      'List ConfigMaps with curl straight to the apiserver, first with a token that is not one, then',
      'with a real token of a service account that has no rights. Same URL, two refusals.',
    ],
    commands: [
      'kubectl create serviceaccount reader -n api-lab',
      `kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d > ca.crt`,
      `SERVER=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')`,
      `curl -s --cacert ca.crt -H 'Authorization: Bearer not-a-token' $SERVER/api/v1/namespaces/api-lab/configmaps`,
      'curl -s --cacert ca.crt -H "Authorization: Bearer $(kubectl create token reader -n api-lab)" $SERVER/api/v1/namespaces/api-lab/configmaps',
    ],
    reset: ['kubectl delete serviceaccount reader -n api-lab --ignore-not-found'],
    watch: [
      '401 Unauthorized: no authenticator knew the token, and anonymous requests are allowed on the',
      'health paths only. Then 403 Forbidden naming system:serviceaccount:api-lab:reader: who you',
      'are was settled, what you may do was not.',
    ],
    cites: [
      APISERVER(
        'pkg/endpoints/filters/authentication.go',
        148,
        'apierrors.NewUnauthorized("Unauthorized")',
        'no authenticator accepted the request: 401',
      ),
      APISERVER(
        'pkg/endpoints/handlers/responsewriters/errors.go',
        76,
        'cannot %s resource %q in API group %q in the namespace %q',
        'authenticated, not authorized: 403 with who and what',
      ),
    ],
    async check(env) {
      const events = await env.audit(`"namespace":"${env.ns}"`);
      const forbidden = events.some(
        (e) =>
          e.verb === 'list' &&
          e.objectRef?.resource === 'configmaps' &&
          e.responseStatus?.code === 403 &&
          (e.userAgent ?? '').startsWith('curl/') &&
          e.user.username === 'system:serviceaccount:api-lab:reader',
      );
      return [
        ...(await requested(env, [
          { verb: 'list', resource: 'configmaps', agent: 'curl', code: 401 },
        ])),
        ...expectThat(
          forbidden,
          'the audit log shows no list of configmaps by curl as system:serviceaccount:api-lab:reader answered 403',
        ),
      ];
    },
  },
];
