// The task list's edge cases, each as a learner types it. The ones that need a namespace to delete
// make their own (ec3-lab, ec4-lab, ec6-lab), so api-lab stays as the levels left it.
import { APIMACHINERY, APISERVER, KUBERNETES } from './cites.ts';
import { apps, core, expectThat, getObj, matches, recorded, type Obj } from './read.ts';
import type { Exercise, LearnEnv } from './types.ts';
import { PROXY, untilLive } from './lines.ts';

const SECTION = 'Edge cases';
const INTERNAL_IP = '{.status.addresses[?(@.type=="InternalIP")].address}';
const STALE = '/api/v1/namespaces/api-lab/configmaps/stale';
/** EC2's cut: one host drops its etcd client traffic both ways (an etcd member's peers talk on 2380, untouched). */
const TABLE = 'learn-stale';
const CUT = `nft add table inet ${TABLE}; nft add chain inet ${TABLE} out '{ type filter hook output priority 0; }'; nft add chain inet ${TABLE} in '{ type filter hook input priority 0; }'; nft add rule inet ${TABLE} out tcp dport 2379 drop; nft add rule inet ${TABLE} in tcp sport 2379 drop`;
const nsGone = async (env: LearnEnv, ns: string) =>
  expectThat(
    (await getObj(env, `/api/v1/namespaces/${ns}`)) === undefined,
    `namespace ${ns} is still there`,
  );

export const EDGE: Exercise[] = [
  {
    id: 'EC1',
    section: SECTION,
    title: 'events are hints, not facts',
    task: [
      'Run a Pod, delete it, and list its events: they outlive it, and say nothing of its end.',
    ],
    commands: [
      'kubectl run ev-demo --image=busybox -n api-lab --restart=Never -- sleep 3600',
      'kubectl wait --for=condition=Ready pod/ev-demo -n api-lab --timeout=120s',
      'kubectl delete pod ev-demo -n api-lab --grace-period=1',
      'kubectl get events -n api-lab --field-selector involvedObject.name=ev-demo',
    ],
    reset: ['kubectl delete pod ev-demo -n api-lab --ignore-not-found --grace-period=1'],
    watch: [
      'Scheduled, Pulled, Created, Started: of a Pod that no longer exists. Events are written',
      'best-effort, deduplicated into a count, and expire (the apiserver keeps them an hour,',
      "--event-ttl); the object's status is the fact.",
    ],
    cites: [
      KUBERNETES(
        'pkg/controlplane/apiserver/options/options.go',
        129,
        'EventTTL:                            1 * time.Hour,',
        'how long an Event is kept (one hour by default)',
      ),
    ],
    async check(env) {
      interface Ev {
        items: { reason: string }[];
      }
      const pod = await getObj(env, core(env, 'pods', 'ev-demo'));
      const ev = await env.api<Ev>(
        'GET',
        `${core(env, 'events')}?fieldSelector=involvedObject.name%3Dev-demo`,
      );
      return [
        ...expectThat(pod === undefined, 'pod ev-demo is still there: delete it'),
        ...expectThat(
          ev.json.items.some((e) => e.reason === 'Started'),
          'no Started event for ev-demo in api-lab',
        ),
      ];
    },
  },
  {
    id: 'EC2',
    section: SECTION,
    title: 'cached reads can be stale',
    task: [
      "Cut one kube-apiserver off from etcd (drop its host's etcd traffic with nft), not the one whose",
      "host holds the VIP (kube-vip renews its Lease through its own host's apiserver). Write a",
      'ConfigMap through the other, read it back from both with resourceVersion=0, then without one.',
      'Record what the cut one answered, restore it, and watch its cache catch up.',
    ],
    commands: [
      `VIP=$(kubectl get lease plndr-cp-lock -n kube-system -o jsonpath='{.spec.holderIdentity}'); if [ "$VIP" = node2 ]; then KEEP=node2 CUT=node1; else KEEP=node1 CUT=node2; fi; NK=$(kubectl get node $KEEP -o jsonpath='${INTERNAL_IP}'); NC=$(kubectl get node $CUT -o jsonpath='${INTERNAL_IP}'); echo "the VIP is on $VIP; keep $KEEP's apiserver (https://$NK:6443), cut $CUT's (https://$NC:6443)"`,
      'kubectl create configmap stale -n api-lab --from-literal=v=before',
      `${untilLive(`kubectl --server https://$NC:6443 get --raw '${STALE}?resourceVersion=0' | grep -q '"v":"before"'`)}; echo "$CUT's cache holds v=before"`,
      `hardwire lab ssh $CUT -- "${CUT}"`,
      `kubectl --server https://$NK:6443 patch configmap stale -n api-lab -p '{"data":{"v":"after"}}' -o jsonpath='written through the kept apiserver at resourceVersion {.metadata.resourceVersion}{"\\n"}'`,
      `kubectl --server https://$NK:6443 get --raw '${STALE}?resourceVersion=0' | grep -o '"v":"[a-z]*"'`,
      `SEEN=$(kubectl --server https://$NC:6443 get --raw '${STALE}?resourceVersion=0'); echo "$SEEN" | grep -o '"resourceVersion":"[0-9]*"\\|"v":"[a-z]*"'`,
      `kubectl --server https://$NC:6443 --request-timeout=5s get configmap stale -n api-lab -o jsonpath='{.data.v}{"\\n"}'`,
      `hardwire lab ssh $CUT -- nft delete table inet ${TABLE}`,
      `kubectl --server https://$NK:6443 create configmap stale-seen -n api-lab --from-literal=cut-rv0="$(echo "$SEEN" | grep -o '"v":"[a-z]*"' | cut -d'"' -f4)" --from-literal=cut-rv="$(echo "$SEEN" | grep -o '"resourceVersion":"[0-9]*"' | cut -d'"' -f4)"`,
      `for i in $(seq 60); do kubectl --server https://$NC:6443 get --raw '${STALE}?resourceVersion=0' | grep -q '"v":"after"' && break; sleep 1; done; echo "the cut apiserver's cache caught up within $i s"`,
    ],
    reset: [
      `for n in $(kubectl get nodes -o name | sed 's#node/##'); do hardwire lab ssh $n -- nft delete table inet ${TABLE} 2>/dev/null; done; true`,
      'kubectl delete configmap stale stale-seen -n api-lab --ignore-not-found',
    ],
    watch: [
      'The kept apiserver answers v=after. The cut one, with resourceVersion=0, answers v=before at the',
      'older resourceVersion, from its watch cache, without a word: its watch on etcd is stalled, and',
      "the etcd client's keepalive (30 s, then 10 s) has not noticed yet. The same read without a",
      'resourceVersion must reach etcd, and times out. Once the table is deleted, it catches up.',
    ],
    cites: [
      APISERVER(
        'pkg/storage/cacher/delegator.go',
        142,
        'if opts.ResourceVersion == "" {',
        'a get without a resourceVersion is read from etcd, a quorum read',
      ),
      APISERVER(
        'pkg/storage/cacher/delegator.go',
        158,
        "It's guaranteed that the returned value is at least that",
        'with one, it is served from the watch cache: "at least that fresh", and 0 asks for nothing',
      ),
      APISERVER(
        'pkg/storage/cacher/cacher.go',
        708,
        'obj, exists, readResourceVersion, err := c.watchCache.WaitUntilFreshAndGet(ctx, getRV, key)',
        'waits until the cache has seen resourceVersion getRV; for 0 it does not wait at all',
      ),
      APISERVER(
        'pkg/storage/storagebackend/factory/etcd3.go',
        63,
        'keepaliveTime    = 30 * time.Second',
        "why a stalled watch goes unnoticed for a while: the etcd client's keepalive period",
      ),
    ],
    async check(env) {
      const seen = await recorded(env, 'stale-seen');
      if (!seen)
        return ['configmap stale-seen (what the cut apiserver answered) is not in api-lab'];
      const now = await getObj(env, core(env, 'configmaps', 'stale'));
      const written = (await env.audit('"name":"stale"')).findLast(
        (e) =>
          e.verb === 'patch' &&
          e.objectRef?.resource === 'configmaps' &&
          e.responseStatus?.code === 200,
      );
      const staleRead = (await env.audit('"name":"stale"')).find(
        (e) =>
          written !== undefined &&
          e.verb === 'get' &&
          e.stageTimestamp > written.stageTimestamp &&
          new URL(e.requestURI, 'https://x').searchParams.get('resourceVersion') === '0',
      );
      return [
        ...expectThat(now?.data?.v === 'after', 'configmap stale does not hold v=after'),
        ...expectThat(
          written !== undefined,
          'the audit log shows no patch of configmap stale answered 200',
        ),
        ...expectThat(
          staleRead !== undefined,
          'the audit log shows no get of configmap stale with resourceVersion=0 after its patch',
        ),
        ...expectThat(
          seen['cut-rv0'] === 'before',
          `the cut apiserver answered v=${seen['cut-rv0'] || '(nothing)'} after the write, not the stale v=before: was it cut off from etcd?`,
        ),
        ...expectThat(
          Number(seen['cut-rv']) > 0 &&
            Number(seen['cut-rv']) < Number(now?.metadata.resourceVersion),
          `the cut apiserver's answer was at resourceVersion ${seen['cut-rv'] || '(none)'}, not older than the write's ${now?.metadata.resourceVersion}`,
        ),
      ];
    },
  },
  {
    id: 'EC3',
    section: SECTION,
    title: 'finalizers outlive their controller',
    task: [
      'A ConfigMap with a finalizer no controller will ever remove holds its namespace in',
      'Terminating; removing the finalizer by hand lets the namespace go.',
    ],
    commands: [
      'kubectl create namespace ec3-lab',
      `kubectl create configmap held -n ec3-lab && kubectl patch configmap held -n ec3-lab --type=merge -p '{"metadata":{"finalizers":["learn.hardwire.dev/gone-controller"]}}'`,
      'kubectl delete namespace ec3-lab --wait=false',
      'kubectl wait --for=condition=NamespaceFinalizersRemaining namespace/ec3-lab --timeout=60s',
      `kubectl get namespace ec3-lab -o jsonpath='{.status.phase}{"\\n"}{range .status.conditions[?(@.status=="True")]}{.type}: {.message}{"\\n"}{end}'`,
      `kubectl patch configmap held -n ec3-lab --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]'`,
      'kubectl wait --for=delete namespace/ec3-lab --timeout=60s',
    ],
    reset: [
      `kubectl patch configmap held -n ec3-lab --type=merge -p '{"metadata":{"finalizers":null}}' 2>/dev/null`,
      'kubectl delete namespace ec3-lab --ignore-not-found --wait=true --timeout=60s',
    ],
    watch: [
      'Terminating, with NamespaceFinalizersRemaining naming learn.hardwire.dev/gone-controller: the',
      "namespace controller waits for the finalizer's owner, which does not exist.",
    ],
    cites: [
      KUBERNETES(
        'pkg/controller/namespace/deletion/status_condition_utils.go',
        137,
        'Some content in the namespace has finalizers remaining: %s',
        'the condition that names the finalizers left',
      ),
    ],
    async check(env) {
      const events = await env.audit('"namespace":"ec3-lab"');
      return [
        ...(await nsGone(env, 'ec3-lab')),
        ...expectThat(
          events.some((e) =>
            matches(e, { verb: 'patch', resource: 'configmaps', name: 'held', code: 200 }),
          ) && events.some((e) => e.verb === 'delete' && e.objectRef?.resource === 'namespaces'),
          'the audit log shows no delete of ec3-lab with the finalizer then removed from held',
        ),
      ];
    },
  },
  {
    id: 'EC4',
    section: SECTION,
    title: 'a namespace delete leaks cluster-scoped children',
    task: [
      'A ClusterRole owned by a ConfigMap in a namespace: delete the namespace, and the ClusterRole',
      'stays. A cluster-scoped object cannot have a namespaced owner.',
    ],
    commands: [
      'kubectl create namespace ec4-lab',
      'kubectl create configmap owner -n ec4-lab',
      "OWNER_UID=$(kubectl get configmap owner -n ec4-lab -o jsonpath='{.metadata.uid}')",
      `kubectl apply -f - <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ec4-leak
  ownerReferences:
  - apiVersion: v1
    kind: ConfigMap
    name: owner
    uid: $OWNER_UID
rules: []
EOF`,
      'kubectl delete namespace ec4-lab --timeout=60s',
      'kubectl get clusterrole ec4-leak',
      'kubectl get events -n default --field-selector reason=OwnerRefInvalidNamespace',
    ],
    reset: [
      'kubectl delete clusterrole ec4-leak --ignore-not-found',
      'kubectl delete namespace ec4-lab --ignore-not-found --timeout=60s',
    ],
    watch: [
      'The ClusterRole is still there after its owner and namespace are gone; the garbage collector',
      'records OwnerRefInvalidNamespace instead of deleting it.',
    ],
    cites: [
      KUBERNETES(
        'pkg/controller/garbagecollector/graph_builder.go',
        534,
        '"OwnerRefInvalidNamespace"',
        'a cluster-scoped dependent with a namespaced owner is reported, not deleted',
      ),
    ],
    async check(env) {
      const cr = await getObj(env, '/apis/rbac.authorization.k8s.io/v1/clusterroles/ec4-leak');
      return [
        ...(await nsGone(env, 'ec4-lab')),
        ...expectThat(
          cr?.metadata.ownerReferences?.[0]?.name === 'owner',
          'clusterrole ec4-leak, owned by configmap owner, is not there',
        ),
      ];
    },
  },
  {
    id: 'EC5',
    section: SECTION,
    title: 'no strategic merge on custom resources',
    task: ['Send a strategic merge patch to a Widget (5.4 made the CRD), then a JSON merge patch.'],
    commands: [
      `kubectl patch widget w-ok -n api-lab --type=strategic -p '{"spec":{"size":4}}'`,
      `kubectl patch widget w-ok -n api-lab --type=merge -p '{"spec":{"size":4}}'`,
    ],
    watch: [
      '415 Unsupported Media Type: a custom resource has no Go struct, so no patchMergeKey; merge',
      'and JSON patch and server-side apply work.',
    ],
    cites: [
      APISERVER(
        'pkg/endpoints/handlers/patch.go',
        87,
        'NewUnsupportedMediaTypeError',
        'a patch type the resource does not support is refused',
      ),
    ],
    async check(env) {
      const events = await env.audit('"resource":"widgets"');
      const w = await getObj<Obj & { spec: { size: number } }>(
        env,
        `/apis/learn.hardwire.dev/v1/namespaces/${env.ns}/widgets/w-ok`,
      );
      return [
        ...expectThat(
          events.some((e) =>
            matches(e, { verb: 'patch', resource: 'widgets', name: 'w-ok', code: 415 }),
          ),
          'the audit log shows no patch of widget w-ok refused with 415',
        ),
        ...expectThat(w?.spec.size === 4, 'widget w-ok does not have size 4 from the merge patch'),
      ];
    },
  },
  {
    id: 'EC6',
    section: SECTION,
    title: 'a deletecollection without a selector',
    task: [
      'In a namespace of its own, three labelled ConfigMaps; DELETE the collection with no',
      'selector, and see what else went.',
    ],
    commands: [
      'kubectl create namespace ec6-lab',
      'for n in a b c; do kubectl create configmap keep-$n -n ec6-lab; done',
      'kubectl get configmaps -n ec6-lab',
      ...PROXY,
      `curl -s -X DELETE http://127.0.0.1:8001/api/v1/namespaces/ec6-lab/configmaps | grep -o '"name": *"[^"]*"'`,
      'kubectl get configmaps -n ec6-lab',
    ],
    reset: ['kubectl delete namespace ec6-lab --ignore-not-found --timeout=60s'],
    watch: [
      'Every ConfigMap went, kube-root-ca.crt too, which its controller then makes again: no',
      'selector is every object, for a list and for a delete.',
    ],
    cites: [
      APISERVER(
        'pkg/endpoints/request/requestinfo.go',
        258,
        'requestInfo.Verb = "deletecollection"',
        'DELETE on the collection, whatever its selector',
      ),
    ],
    async check(env) {
      const events = await env.audit('"namespace":"ec6-lab"');
      const left = await env.api<{ items: { metadata: { name: string } }[] }>(
        'GET',
        '/api/v1/namespaces/ec6-lab/configmaps',
      );
      return [
        ...expectThat(
          events.some(
            (e) =>
              e.verb === 'deletecollection' &&
              e.objectRef?.resource === 'configmaps' &&
              !new URL(e.requestURI, 'https://x').searchParams.has('labelSelector'),
          ),
          'the audit log shows no deletecollection of configmaps in ec6-lab without a selector',
        ),
        ...expectThat(
          left.status === 200 && !left.json.items.some((i) => i.metadata.name.startsWith('keep-')),
          'the keep-* ConfigMaps of ec6-lab are still there',
        ),
      ];
    },
  },
  {
    id: 'EC7',
    section: SECTION,
    title: 'generation against observedGeneration',
    task: [
      'Label own-demo, annotate it, then scale it: after each, read metadata.generation and',
      'status.observedGeneration.',
    ],
    commands: [
      `kubectl get deploy own-demo -n api-lab -o jsonpath='{.metadata.generation} {.status.observedGeneration}{"\\n"}'`,
      'kubectl label deploy own-demo -n api-lab learn.hardwire.dev/touched=yes --overwrite',
      `kubectl get deploy own-demo -n api-lab -o jsonpath='{.metadata.generation} {.status.observedGeneration}{"\\n"}'`,
      'kubectl annotate deploy own-demo -n api-lab learn.hardwire.dev/note="$(date +%s)" --overwrite',
      `kubectl get deploy own-demo -n api-lab -o jsonpath='{.metadata.generation} {.status.observedGeneration}{"\\n"}'`,
      'kubectl scale deploy own-demo -n api-lab --replicas=2',
      `kubectl get deploy own-demo -n api-lab -o jsonpath='{.metadata.generation} {.status.observedGeneration}{"\\n"}'`,
      'kubectl rollout status deploy/own-demo -n api-lab --timeout=120s',
      `kubectl get deploy own-demo -n api-lab -o jsonpath='{.metadata.generation} {.status.observedGeneration}{"\\n"}'`,
    ],
    watch: [
      'A label leaves generation alone; a spec change moves it, and observedGeneration follows once',
      "the controller has acted. A Deployment's annotation moves it too: the Deployment copies its",
      'annotations to its ReplicaSets, so its strategy counts them as a change to act on.',
    ],
    cites: [
      KUBERNETES(
        'pkg/registry/apps/deployment/strategy.go',
        118,
        'annotation updates bump the generation',
        "a Deployment's annotations count, because they are copied to its ReplicaSets",
      ),
      KUBERNETES(
        'pkg/registry/apps/deployment/strategy.go',
        122,
        'newDeployment.Generation = oldDeployment.Generation + 1',
        'the bump, for a spec or an annotation change',
      ),
    ],
    async check(env) {
      const d = await getObj<
        Obj & { spec: { replicas: number }; status: { observedGeneration?: number } }
      >(env, apps(env, 'deployments', 'own-demo'));
      return [
        ...expectThat(
          d?.metadata.labels?.['learn.hardwire.dev/touched'] === 'yes' &&
            d.metadata.annotations?.['learn.hardwire.dev/note'] !== undefined,
          'own-demo has no label learn.hardwire.dev/touched=yes and annotation learn.hardwire.dev/note',
        ),
        ...expectThat(d?.spec.replicas === 2, 'own-demo is not scaled to 2'),
        ...expectThat(
          d?.status.observedGeneration === d?.metadata.generation,
          "own-demo's observedGeneration has not caught up with its generation",
        ),
      ];
    },
  },
  {
    id: 'EC8',
    section: SECTION,
    title: 'two controllers flapping one field',
    task: ['Two loops, each sure it owns data.owner of one ConfigMap, for 6 s, with a watch open.'],
    commands: [
      'kubectl create configmap flap -n api-lab --from-literal=owner=none',
      `for who in a b; do (for i in 1 2 3 4 5 6; do kubectl patch configmap flap -n api-lab --type=merge -p "{\\"data\\":{\\"owner\\":\\"$who\\"}}" >/dev/null; sleep 1; done) & done`,
      'kubectl get configmap flap -n api-lab --watch --output-watch-events -o jsonpath=\'{.type} {.object.metadata.resourceVersion} {.object.data.owner}{"\\n"}\' --request-timeout=7s',
      'wait',
    ],
    reset: ['kubectl delete configmap flap -n api-lab --ignore-not-found'],
    watch: [
      'MODIFIED a, b, a, b...: every write succeeds, each a new resourceVersion. Neither loop is told;',
      'server-side apply with two field managers would have made it a 409 conflict.',
    ],
    cites: [
      APIMACHINERY(
        'pkg/util/managedfields/internal/conflict.go',
        47,
        'Apply failed with 1 conflict',
        'what apply says instead, when two managers want one field',
      ),
    ],
    async check(env) {
      const events = await env.audit('"name":"flap"');
      const n = events.filter((e) =>
        matches(e, { verb: 'patch', resource: 'configmaps', name: 'flap', code: 200 }),
      ).length;
      return expectThat(
        n >= 6,
        `the audit log shows ${n} patches of configmap flap, not six or more`,
      );
    },
  },
];
