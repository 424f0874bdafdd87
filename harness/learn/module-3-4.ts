// Module 3.4 of the curriculum, CRDs and aggregation: two served versions and one stored with no
// conversion webhook; a round trip through both versions, then a field lost on the way to storage;
// where a CRD's REST storage comes from at runtime (built on demand from the CRD object, dropped on
// each spec change); and a path under /apis served by another process, metrics-server, through the
// v1beta1.metrics.k8s.io APIService. `etcdctl` is the first etcd host's (env.ts).
import { APIEXTENSIONS, APISERVER, citeIn, live } from './cites.ts';
import { STAGING_VERSION } from '../drills/index.ts';
import { expectThat, getObj, recorded, type AuditDetail, type Obj } from './read.ts';
import type { AuditEvent, Exercise, Findings, LearnEnv } from './types.ts';

const SECTION = 'Module 3.4: CRD versions, storage and aggregation';

/** A line of kube-aggregator at the pinned version, and of metrics-server at the version the addon builds. */
const AGGREGATOR = citeIn('k8s.io/kube-aggregator', STAGING_VERSION);
const METRICS_SERVER = citeIn('sigs.k8s.io/metrics-server', 'v0.8.0');

const GROUP = 'conv.learn.hardwire.dev';
const CRD = `gizmos.${GROUP}`;
const at = (v: string, name?: string) =>
  `/apis/${GROUP}/${v}/namespaces/api-lab/gizmos${name ? `/${name}` : ''}`;

/** Two served versions, v1 stored, no webhook: v2 knows a field v1 does not. */
const GIZMOS = [
  `kubectl apply -f - <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${CRD}
spec:
  group: ${GROUP}
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  conversion: {strategy: None}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
              tags: {type: array, items: {type: string}}
EOF`,
  `kubectl wait --for=condition=Established crd/${CRD} --timeout=30s`,
];

const gizmo = (version: string, name: string, spec: string) =>
  `kubectl apply -n api-lab -f - <<'EOF'\napiVersion: ${GROUP}/${version}\nkind: Gizmo\nmetadata: {name: ${name}}\nspec: ${spec}\nEOF`;

/** The value etcd holds for a gizmo (a custom resource is stored as JSON), or undefined. */
async function stored(env: LearnEnv, name: string): Promise<Obj & { apiVersion?: string }> {
  const out = await env.etcdctl([
    'get',
    `/registry/${GROUP}/gizmos/api-lab/${name}`,
    '--print-value-only',
  ]);
  try {
    return JSON.parse(out) as Obj & { apiVersion?: string };
  } catch {
    return { metadata: { name, uid: '', resourceVersion: '' } };
  }
}

/** Audit events of one gizmo's requests through one version (the objectRef names the version of the path). */
async function through(env: LearnEnv, verb: string, version: string, name: string) {
  const events = (await env.audit(`"name":"${name}"`)) as (AuditEvent & {
    objectRef?: { apiVersion?: string };
  })[];
  return events.filter(
    (e) =>
      e.verb === verb &&
      e.objectRef?.resource === 'gizmos' &&
      e.objectRef.apiGroup === GROUP &&
      e.objectRef.apiVersion === version &&
      (e.responseStatus?.code ?? 0) < 300,
  );
}

interface Crd {
  metadata: { generation?: number };
  spec: {
    conversion?: { strategy?: string };
    versions: { name: string; served: boolean; storage: boolean }[];
  };
  status?: {
    storedVersions?: string[];
    conditions?: { type: string; status: string; reason?: string }[];
  };
}

const established = (crd: Crd | undefined) =>
  crd?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;

const STORE = 'store.learn.hardwire.dev';
const COGS = `/apis/${STORE}/v1/cogs`;
const crdOf = (plural: string, kind: string) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.${STORE}
spec:
  group: ${STORE}
  scope: Cluster
  names: {plural: ${plural}, singular: ${plural.replace(/s$/, '')}, kind: ${kind}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true`;

/** This apiserver's count of watch caches built for cogs: one per REST storage the CRD handler made. */
const INITS = `INITS() { kubectl get --raw /metrics | sed -n 's/^apiserver_watch_cache_initializations_total{group="${STORE}",resource="cogs"} //p' | grep . || echo 0; }`;

const METRICS_NODES = '/apis/metrics.k8s.io/v1beta1/nodes';
const MS_USER = 'system:serviceaccount:kube-system:metrics-server';
const LEARNER = 'metrics-learner';

export const MODULE_3_4: Exercise[] = [
  {
    id: '3.4a',
    section: SECTION,
    title: 'two served versions, one stored, no webhook',
    task: [
      'Write a CRD with two served versions, v1 (the storage version) and v2, and conversion',
      'strategy None. Create one object through v1 and one through v2; read the first through both',
      "versions; show the CRD's status.storedVersions, and the apiVersion of each key in etcd.",
    ],
    commands: [
      ...GIZMOS,
      `kubectl get crd ${CRD} -o jsonpath='{range .spec.versions[*]}{.name} served={.served} storage={.storage}{"\\n"}{end}conversion={.spec.conversion.strategy}{"\\n"}'`,
      gizmo('v1', 'g-one', '{size: 3, color: red}'),
      gizmo('v2', 'g-two', '{size: 4, color: blue}'),
      `kubectl get gizmos.v1.${GROUP} g-one -n api-lab -o jsonpath='{.apiVersion} {.spec}{"\\n"}'`,
      `kubectl get gizmos.v2.${GROUP} g-one -n api-lab -o jsonpath='{.apiVersion} {.spec}{"\\n"}'`,
      `kubectl get crd ${CRD} -o jsonpath='storedVersions={.status.storedVersions}{"\\n"}'`,
      `for g in g-one g-two; do echo "$g in etcd: $(etcdctl get /registry/${GROUP}/gizmos/api-lab/$g --print-value-only | grep -o '^{"apiVersion":"[^"]*"')"; done`,
    ],
    reset: ['kubectl delete gizmos g-one g-two -n api-lab --ignore-not-found 2>/dev/null; true'],
    watch: [
      'The same object reads as conv.learn.hardwire.dev/v1 and as /v2, with the same spec: with',
      'strategy None the apiserver only rewrites apiVersion. Whichever version it was written through,',
      'etcd holds "apiVersion":"conv.learn.hardwire.dev/v1", and storedVersions is ["v1"].',
    ],
    cites: [
      APIEXTENSIONS(
        'pkg/apiserver/conversion/nop_converter.go',
        39,
        'in.GetObjectKind().SetGroupVersionKind(targetGV.WithKind(',
        'strategy None: "conversion" sets apiVersion and nothing else',
      ),
      APIEXTENSIONS(
        'pkg/apiserver/customresource_handler.go',
        875,
        'encoderVersion:        schema.GroupVersion{Group: crd.Spec.Group, Version: storageVersion}',
        "every served version's storage encodes to the one storage version",
      ),
      APIEXTENSIONS(
        'pkg/registry/customresourcedefinition/strategy.go',
        82,
        'crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)',
        'storedVersions starts as the storage version the CRD was created with',
      ),
    ],
    async check(env) {
      const crd = await getObj<Crd>(
        env,
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`,
      );
      if (!crd) return [`CRD ${CRD} is not on the cluster`];
      const served = crd.spec.versions.filter((v) => v.served).map((v) => v.name);
      const storage = crd.spec.versions.filter((v) => v.storage).map((v) => v.name);
      const findings: Findings = [
        ...expectThat(
          served.length === 2 && storage.length === 1,
          `${CRD} serves ${served.join(', ')} and stores ${storage.join(', ')}: not two served, one stored`,
        ),
        ...expectThat(
          (crd.spec.conversion?.strategy ?? 'None') === 'None',
          `${CRD}'s conversion strategy is ${crd.spec.conversion?.strategy}, not None`,
        ),
        ...expectThat(
          JSON.stringify(crd.status?.storedVersions) === JSON.stringify(storage),
          `${CRD}'s storedVersions is ${JSON.stringify(crd.status?.storedVersions)}, not ${JSON.stringify(storage)}`,
        ),
      ];
      for (const [name, version] of [
        ['g-one', 'v1'],
        ['g-two', 'v2'],
      ] as const) {
        const inEtcd = await stored(env, name);
        findings.push(
          ...expectThat(
            inEtcd.apiVersion === `${GROUP}/${storage[0]}`,
            `etcd holds ${name} as ${inEtcd.apiVersion ?? 'nothing'}, not ${GROUP}/${storage[0]}`,
          ),
          ...expectThat(
            (await through(env, 'create', version, name)).length > 0,
            `the audit log shows no create of gizmo ${name} through ${version}`,
          ),
        );
      }
      for (const v of ['v1', 'v2'])
        findings.push(
          ...expectThat(
            (await through(env, 'get', v, 'g-one')).length > 0,
            `the audit log shows no read of gizmo g-one through ${v}`,
          ),
        );
      return findings;
    },
  },
  {
    id: '3.4b',
    section: SECTION,
    title: 'a round trip proven, then broken by a lossy conversion',
    task: [
      "With 3.4a's CRD: create g-round through v1, read it through v2 and write it back through v2",
      '(replace), then read it through v1: the spec is unchanged. Then create g-lossy through v2',
      'with spec.tags, a field only v2 has, and read it back through v2.',
    ],
    commands: [
      ...GIZMOS,
      gizmo('v1', 'g-round', '{size: 5, color: green}'),
      `kubectl get gizmos.v1.${GROUP} g-round -n api-lab -o jsonpath='before, v1: {.spec}{"\\n"}'`,
      `kubectl get gizmos.v2.${GROUP} g-round -n api-lab -o json | kubectl replace -f -`,
      `kubectl get gizmos.v1.${GROUP} g-round -n api-lab -o jsonpath='after v2 and back, v1: {.spec}{"\\n"}'`,
      gizmo('v2', 'g-lossy', '{size: 2, color: teal, tags: [fragile, heavy]}'),
      `kubectl get gizmos.v2.${GROUP} g-lossy -n api-lab -o jsonpath='read back through v2: {.spec}{"\\n"}'`,
      `echo "etcd: $(etcdctl get /registry/${GROUP}/gizmos/api-lab/g-lossy --print-value-only | grep -o '"spec":{[^}]*}')"`,
      `kubectl get gizmos.v2.${GROUP} g-lossy -n api-lab -o jsonpath='{.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration}'`,
    ],
    reset: [
      'kubectl delete gizmos g-round g-lossy -n api-lab --ignore-not-found 2>/dev/null; true',
    ],
    watch: [
      'g-round: the same spec before and after the trip through v2 (every field is in both schemas).',
      'g-lossy: the create is answered 201 and no warning, and the object read back through v2 has',
      "no tags. On the way to storage the object is converted to v1 and pruned by v1's schema; read",
      "back, it is converted to v2 again, from what was stored. Only kubectl's last-applied",
      'annotation (a string to the apiserver) still holds what was sent.',
    ],
    cites: [
      APIEXTENSIONS(
        'pkg/apiserver/customresource_handler.go',
        1288,
        'c := schemaCoercingConverter{delegate: t.converter, validator: unstructuredSchemaCoercer{',
        'the storage codec converts to the storage version through the schema-coercing converter...',
      ),
      APIEXTENSIONS(
        'pkg/apiserver/customresource_handler.go',
        1378,
        'if _, err := v.validator.apply(u); err != nil {',
        "...which, after each conversion, coerces the result to the target version's schema...",
      ),
      APIEXTENSIONS(
        'pkg/apiserver/customresource_handler.go',
        1438,
        'structuralpruning.PruneWithOptions(u.Object, v.structuralSchemas[gv.Version], true, pruneOpts)',
        "...which prunes every field that schema does not name: v2's tags, converted to v1",
      ),
      APIEXTENSIONS(
        'pkg/apiserver/conversion/nop_converter.go',
        39,
        'in.GetObjectKind().SetGroupVersionKind(targetGV.WithKind(',
        'strategy None moves no field anywhere: a webhook would have to keep tags (an annotation, say)',
      ),
    ],
    async check(env) {
      const findings: Findings = [];
      const round = await getObj(env, at('v1', 'g-round'));
      if (!round) findings.push('gizmo g-round is not in api-lab');
      else
        findings.push(
          ...expectThat(
            (await through(env, 'update', 'v2', 'g-round')).length > 0,
            'the audit log shows no replace of g-round through v2',
          ),
          ...expectThat(
            round.spec?.size === 5 && round.spec?.color === 'green',
            `g-round's spec through v1 is ${JSON.stringify(round.spec)}, not the one it was created with`,
          ),
        );
      const lossy = await getObj(env, at('v2', 'g-lossy'));
      if (!lossy) return [...findings, 'gizmo g-lossy is not in api-lab'];
      let sent: { apiVersion?: string; spec?: { tags?: string[] } } = {};
      try {
        sent = JSON.parse(
          lossy.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] ?? '{}',
        ) as typeof sent;
      } catch {}
      const inEtcd = await stored(env, 'g-lossy');
      return [
        ...findings,
        ...expectThat(
          sent.apiVersion === `${GROUP}/v2` && (sent.spec?.tags?.length ?? 0) > 0,
          'g-lossy was not applied through v2 with spec.tags (its last-applied annotation)',
        ),
        ...expectThat(
          lossy.spec?.tags === undefined,
          `g-lossy read through v2 still has tags ${JSON.stringify(lossy.spec?.tags)}`,
        ),
        ...expectThat(
          inEtcd.apiVersion === `${GROUP}/v1` && inEtcd.spec?.tags === undefined,
          `etcd holds g-lossy as ${inEtcd.apiVersion ?? 'nothing'}${inEtcd.spec?.tags ? ' with tags' : ''}, not v1 without tags`,
        ),
        ...expectThat(
          (await through(env, 'get', 'v2', 'g-lossy')).length > 0,
          'the audit log shows no read of g-lossy through v2',
        ),
      ];
    },
  },
  {
    id: '3.4c',
    section: SECTION,
    title: "where a CRD's REST storage comes from at runtime",
    task: [
      'Make a CRD cogs that cannot be Established (its kind is taken by another CRD of its group),',
      "list its path, and count this apiserver's watch caches for it. Delete the other CRD, wait for",
      'cogs to be Established, list again and count; then change its spec (a printer column), list',
      'and count again. Record the three counts in a ConfigMap crd-storage.',
    ],
    commands: [
      `kubectl apply -f - <<'EOF'\n${crdOf('sprockets', 'Sprocket')}\nEOF`,
      `kubectl wait --for=condition=Established crd/sprockets.${STORE} --timeout=30s`,
      `kubectl apply -f - <<'EOF'\n${crdOf('cogs', 'Sprocket')}\nEOF`,
      'sleep 2',
      `kubectl get crd cogs.${STORE} -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\\n"}{end}'`,
      `kubectl get --raw ${COGS}`,
      INITS,
      'BEFORE=$(INITS); echo "watch caches for cogs: $BEFORE"',
      `kubectl delete crd sprockets.${STORE}`,
      `kubectl wait --for=condition=Established crd/cogs.${STORE} --timeout=60s`,
      `kubectl get --raw ${COGS}; echo`,
      'SERVED=$(INITS); echo "watch caches for cogs: $SERVED"',
      `kubectl patch crd cogs.${STORE} --type=json -p '[{"op":"add","path":"/spec/versions/0/additionalPrinterColumns","value":[{"name":"Teeth","type":"integer","jsonPath":".spec.teeth"}]}]'`,
      `for i in $(seq 30); do kubectl get --raw ${COGS} >/dev/null; [ "$(INITS)" -gt "$SERVED" ] && break; sleep 1; done; AFTER=$(INITS); echo "watch caches for cogs: $AFTER"`,
      'kubectl create configmap crd-storage -n api-lab --from-literal=before=$BEFORE --from-literal=served=$SERVED --from-literal=after-update=$AFTER',
    ],
    reset: [
      `kubectl delete crd cogs.${STORE} sprockets.${STORE} --ignore-not-found`,
      'kubectl delete configmap crd-storage -n api-lab --ignore-not-found',
    ],
    watch: [
      'While cogs is not Established the handler passes its path on, and it is a plain 404: no',
      "storage is built, and no watch cache (the counter is this apiserver's since it started, 0 on",
      'a first run). Once Established, the first request builds the REST storage from the CRD object',
      '(a watch cache per resource, started and counted: one more), and a change to its spec drops',
      'that storage, so the next request builds another: one more again.',
    ],
    cites: [
      APIEXTENSIONS(
        'pkg/apiserver/customresource_handler.go',
        293,
        '!apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {',
        'neither NamesAccepted nor Established: the request goes to the delegate, a 404',
      ),
      APIEXTENSIONS(
        'pkg/apiserver/customresource_handler.go',
        616,
        'func (r *crdHandler) getOrCreateServingInfoFor(uid types.UID, name string) (*crdInfo, error) {',
        "the storage map is keyed by the CRD's uid; missing, it is built from the CRD in the lister",
      ),
      live(
        APIEXTENSIONS(
          'pkg/apiserver/customresource_handler.go',
          855,
          'storages[v.Name], err = customresource.NewStorage(',
          'a REST storage per version, each with its own watch cache (the Cacher)',
        ),
      ),
      live(
        APIEXTENSIONS(
          'pkg/apiserver/customresource_handler.go',
          513,
          'r.removeStorage_locked(newCRD.UID)',
          'a CRD update that changes the spec drops the storage; the next request builds it anew',
        ),
      ),
      APIEXTENSIONS(
        'pkg/controller/status/naming_controller.go',
        191,
        'namesAcceptedCondition.Reason = "ListKindConflict"',
        "why cogs was not accepted: its kind, and so its list kind, is another CRD's in the group (the last conflict checked names the reason)",
      ),
      APISERVER(
        'pkg/storage/cacher/cacher.go',
        490,
        'metrics.WatchCacheInitializations.WithLabelValues(c.groupResource.Group, c.groupResource.Resource).Inc()',
        'apiserver_watch_cache_initializations_total counts each watch cache that came up',
      ),
    ],
    async check(env) {
      const crd = await getObj<Crd>(
        env,
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/cogs.${STORE}`,
      );
      if (!crd) return [`CRD cogs.${STORE} is not on the cluster`];
      const rec = await recorded(env, 'crd-storage');
      const events = (await env.audit('"resource":"cogs"')).filter(
        (e) => e.verb === 'list' && e.requestURI.startsWith(COGS),
      );
      const first404 = events.find((e) => e.responseStatus?.code === 404);
      const served = (e: AuditEvent) =>
        e.responseStatus?.code === 200 &&
        first404 !== undefined &&
        e.stageTimestamp > first404.stageTimestamp;
      return [
        ...expectThat(established(crd), `cogs.${STORE} is not Established`),
        ...expectThat(
          (crd.metadata.generation ?? 1) >= 2,
          `cogs.${STORE}'s spec was never changed (generation ${crd.metadata.generation})`,
        ),
        ...expectThat(first404 !== undefined, `the audit log shows no list of cogs answered 404`),
        ...expectThat(
          events.some(served),
          'the audit log shows no list of cogs answered 200 after one answered 404',
        ),
        ...(rec
          ? expectThat(
              Number(rec.served) > Number(rec.before) &&
                Number(rec['after-update']) > Number(rec.served),
              `crd-storage records ${rec.before}, ${rec.served}, ${rec['after-update']} watch caches: not one more once Established and one more after the spec changed`,
            )
          : ['configmap crd-storage is not in api-lab']),
      ];
    },
  },
  {
    id: '3.4d',
    section: SECTION,
    title: 'a path served by a process that is not the apiserver: an APIService',
    task: [
      'Find who serves metrics.k8s.io (the v1beta1.metrics.k8s.io APIService, its Service, the Pod',
      'behind it). Let a user metrics-learner read node metrics, then read them as that user through',
      'the apiserver, raw and with kubectl top.',
    ],
    commands: [
      'kubectl get apiservice v1beta1.metrics.k8s.io',
      `kubectl get apiservice v1beta1.metrics.k8s.io -o jsonpath='service={.spec.service.namespace}/{.spec.service.name} insecureSkipTLSVerify={.spec.insecureSkipTLSVerify}{"\\n"}'`,
      `kubectl get apiservice v1.apps -o jsonpath='v1.apps service={.spec.service} (none: the apiserver itself){"\\n"}'`,
      `kubectl get endpointslices -n kube-system -l kubernetes.io/service-name=metrics-server -o jsonpath='{range .items[*].endpoints[*]}endpoint {.addresses[0]} {.targetRef.name}{"\\n"}{end}'`,
      'kubectl create clusterrole metrics-learner --verb=get,list --resource=nodes,nodes.metrics.k8s.io --dry-run=client -o yaml | kubectl apply -f -',
      `kubectl create clusterrolebinding metrics-learner --clusterrole=metrics-learner --user=${LEARNER} --dry-run=client -o yaml | kubectl apply -f -`,
      `kubectl get --raw ${METRICS_NODES} --as=${LEARNER} | head -c 300; echo`,
      `kubectl top nodes --as=${LEARNER}`,
    ],
    watch: [
      'v1.apps has no service: the apiserver serves it. v1beta1.metrics.k8s.io names',
      'kube-system/metrics-server; the aggregator in the apiserver authenticates and authorizes the',
      "request, then proxies it to the Pod's address, naming the user in X-Remote-User. metrics-server",
      'authorizes it again by asking the apiserver: the audit log shows its ServiceAccount creating a',
      `SubjectAccessReview for ${LEARNER}, a user that only ever spoke to the apiserver.`,
    ],
    cites: [
      AGGREGATOR(
        'pkg/apiserver/handler_proxy.go',
        142,
        'rloc, err := r.serviceResolver.ResolveEndpoint(',
        "the APIService's Service is resolved to an endpoint (--enable-aggregator-routing: the Pod)",
      ),
      AGGREGATOR(
        'pkg/apiserver/handler_proxy.go',
        168,
        'transport.NewAuthProxyRoundTripper(user.GetName(), userUID, user.GetGroups(), user.GetExtra(), proxyRoundTripper)',
        'the authenticated user goes along as request headers, on the front-proxy client cert',
      ),
      AGGREGATOR(
        'pkg/apiserver/handler_proxy.go',
        187,
        'handler.ServeHTTP(w, newReq)',
        "the request is proxied; the answer is metrics-server's",
      ),
      METRICS_SERVER(
        'cmd/metrics-server/app/options/options.go',
        107,
        'Authorization:           genericoptions.NewDelegatingAuthorizationOptions(),',
        'metrics-server authorizes each request by a SubjectAccessReview to the apiserver (allowed answers cached 10 s)',
      ),
      METRICS_SERVER(
        'pkg/api/node.go',
        81,
        'func (m *nodeMetrics) List(',
        'and answers the list of NodeMetrics from its own scrapes of the kubelets',
      ),
    ],
    async check(env) {
      interface ApiService {
        spec: { service?: { namespace: string; name: string } };
        status?: { conditions?: { type: string; status: string }[] };
      }
      const svc = await getObj<ApiService>(
        env,
        '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io',
      );
      if (!svc)
        return [
          'APIService v1beta1.metrics.k8s.io is not on the cluster (addons: [metrics-server])',
        ];
      const events = (await env.audit(`"${LEARNER}"`)) as AuditDetail[];
      const listed = events.some(
        (e) =>
          e.verb === 'list' &&
          e.requestURI === METRICS_NODES &&
          e.impersonatedUser?.username === LEARNER &&
          e.responseStatus?.code === 200,
      );
      interface Sar {
        spec?: { user?: string; resourceAttributes?: { group?: string; resource?: string } };
      }
      const asked = events.some((e) => {
        const sar = e.requestObject as Sar | undefined;
        return (
          e.verb === 'create' &&
          e.objectRef?.resource === 'subjectaccessreviews' &&
          e.user.username === MS_USER &&
          sar?.spec?.user === LEARNER &&
          sar.spec.resourceAttributes?.group === 'metrics.k8s.io' &&
          sar.spec.resourceAttributes.resource === 'nodes'
        );
      });
      return [
        ...expectThat(
          svc.spec.service?.namespace === 'kube-system' &&
            svc.spec.service.name === 'metrics-server',
          'APIService v1beta1.metrics.k8s.io does not name the Service kube-system/metrics-server',
        ),
        ...expectThat(
          svc.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ??
            false,
          'APIService v1beta1.metrics.k8s.io is not Available',
        ),
        ...expectThat(
          listed,
          `the audit log shows no list of ${METRICS_NODES} as ${LEARNER} answered 200`,
        ),
        ...expectThat(
          asked,
          `the audit log shows no SubjectAccessReview by ${MS_USER} about ${LEARNER} listing nodes.metrics.k8s.io`,
        ),
      ];
    },
  },
];
