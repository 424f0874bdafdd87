// The Phase 3 task list, levels 0 to 5, as a learner types it: kubectl, and curl through
// `kubectl proxy`, in the namespace api-lab, with the images named busybox and nginx. Each check reads
// the object itself, or the apiserver's audit log for the request the learner made and how it was
// answered (the audit policy records every request's verb, URI, user agent and status).
import { APIMACHINERY, APISERVER, APIEXTENSIONS, KUBERNETES, live } from './cites.ts';
import { apps, core, expectThat, getObj, matches, requested, type Obj } from './read.ts';
import type { Exercise, Findings, LearnEnv } from './types.ts';
import { PAST_THE_WINDOW, PROXY } from './lines.ts';

const API = 'http://127.0.0.1:8001/api/v1/namespaces/api-lab';

interface Pod extends Obj {
  spec: {
    containers: { name: string; image: string }[];
    initContainers?: { name: string; image: string; restartPolicy?: string }[];
  };
  status: {
    phase: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; imageID: string; ready: boolean }[];
    initContainerStatuses?: { name: string; imageID: string; ready: boolean; started?: boolean }[];
  };
}
interface Deployment extends Obj {
  spec: {
    replicas?: number;
    template: { spec: { containers: { name: string; image: string }[] } };
  };
  status: { availableReplicas?: number };
}

const FROM_REGISTRY = (name: string) =>
  new RegExp(`^docker\\.io/library/${name}@sha256:[0-9a-f]{64}$`);

async function podRunning(env: LearnEnv, name: string): Promise<[Pod | undefined, Findings]> {
  const p = await getObj<Pod>(env, core(env, 'pods', name));
  if (!p) return [undefined, [`pod ${name} is not in ${env.ns}`]];
  return [
    p,
    expectThat(p.status.phase === 'Running', `pod ${name} is ${p.status.phase}, not Running`),
  ];
}

const level0: Exercise[] = [
  {
    id: '0.1',
    section: 'Level 0: a namespace and two workloads',
    title: 'busybox and nginx, by the names the task list uses',
    task: [
      'Make the namespace api-lab, a Pod w1 that sleeps, and a Deployment own-demo, with the images',
      'named as the task list names them: busybox and nginx.',
    ],
    commands: [
      'kubectl create namespace api-lab',
      'kubectl run w1 --image=busybox -n api-lab -- sleep 3600',
      'kubectl create deploy own-demo --image=nginx -n api-lab',
      'kubectl wait --for=condition=Ready pod/w1 -n api-lab --timeout=120s',
      'kubectl rollout status deploy/own-demo -n api-lab --timeout=120s',
    ],
    watch: [
      '"busybox" is docker.io/library/busybox:latest, and its pull policy is Always (a :latest tag).',
      "containerd asks the lab registry for it: docker.io's mirror in /etc/containerd/certs.d/docker.io/hosts.toml.",
      "The Pod's imageID names the digest the registry served.",
    ],
    cites: [
      KUBERNETES(
        'pkg/apis/core/v1/defaults.go',
        89,
        'obj.ImagePullPolicy = v1.PullAlways',
        'a :latest image defaults to imagePullPolicy Always',
      ),
    ],
    async check(env) {
      const [p, f] = await podRunning(env, 'w1');
      const d = await getObj<Deployment>(env, apps(env, 'deployments', 'own-demo'));
      return [
        ...f,
        ...(p
          ? expectThat(
              FROM_REGISTRY('busybox').test(p.status.containerStatuses?.[0]?.imageID ?? ''),
              `w1's image is ${p.status.containerStatuses?.[0]?.imageID ?? 'not pulled'}, not docker.io/library/busybox by digest`,
            )
          : []),
        ...(d
          ? [
              ...expectThat(
                d.spec.template.spec.containers[0]?.image === 'nginx',
                'own-demo\'s image is not "nginx"',
              ),
              ...expectThat(
                (d.status.availableReplicas ?? 0) >= 1,
                'own-demo has no available replica',
              ),
            ]
          : [`deployment own-demo is not in ${env.ns}`]),
      ];
    },
  },
  {
    id: '0.2',
    section: 'Level 0: a namespace and two workloads',
    title: 'a sidecar with image: busybox',
    task: [
      'Run nginx with a busybox sidecar that writes the date into a shared volume every 5 s, as a',
      'native sidecar (an init container with restartPolicy: Always), and read what it wrote.',
    ],
    commands: [
      `kubectl apply -n api-lab -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: sidecar-demo
spec:
  initContainers:
  - name: logger
    image: busybox
    restartPolicy: Always
    command: ["sh", "-c", "while true; do date >> /shared/date.log; sleep 5; done"]
    volumeMounts: [{name: shared, mountPath: /shared}]
  containers:
  - name: web
    image: nginx
    volumeMounts: [{name: shared, mountPath: /usr/share/nginx/html/shared}]
  volumes:
  - name: shared
    emptyDir: {}
EOF`,
      'kubectl wait --for=condition=Ready pod/sidecar-demo -n api-lab --timeout=120s',
      'kubectl exec sidecar-demo -n api-lab -c logger -- cat /shared/date.log',
    ],
    reset: ['kubectl delete pod sidecar-demo -n api-lab --ignore-not-found --grace-period=1'],
    watch: [
      'The sidecar starts before nginx and keeps running: it is in initContainerStatuses, started and ready.',
    ],
    cites: [
      KUBERNETES(
        'pkg/kubelet/kuberuntime/kuberuntime_container.go',
        1126,
        'isPreviouslyInitialized && !podutil.IsRestartableInitContainer(container)',
        'after initialization, only an init container with restartPolicy Always is kept running',
      ),
    ],
    async check(env) {
      const [p, f] = await podRunning(env, 'sidecar-demo');
      if (!p) return f;
      const side = p.spec.initContainers?.find((c) => c.restartPolicy === 'Always');
      const st = p.status.initContainerStatuses?.find((s) => s.name === side?.name);
      return [
        ...f,
        ...expectThat(
          side?.image === 'busybox',
          'no init container with restartPolicy: Always and image busybox',
        ),
        ...expectThat(st?.started === true && st.ready, 'the sidecar is not started and ready'),
        ...expectThat(
          FROM_REGISTRY('nginx').test(p.status.containerStatuses?.[0]?.imageID ?? ''),
          'the main container is not nginx from the lab registry',
        ),
      ];
    },
  },
];

const level1: Exercise[] = [
  {
    id: '1.1',
    section: 'Level 1: the API by hand',
    title: 'kubectl proxy and curl',
    task: ['Start kubectl proxy, read w1 with curl, and create a ConfigMap from-curl with a POST.'],
    commands: [
      ...PROXY,
      `curl -s ${API}/pods/w1 | head -n 12`,
      `curl -s -X POST -H 'Content-Type: application/json' ${API}/configmaps -d '{"metadata":{"name":"from-curl"},"data":{"made":"by curl through kubectl proxy"}}'`,
    ],
    reset: ['kubectl delete configmap from-curl -n api-lab --ignore-not-found'],
    watch: [
      'kubectl proxy adds the credentials; curl sends none. The audit log shows the request as the',
      "admin's, with curl's user agent.",
    ],
    cites: [],
    async check(env) {
      const cm = await getObj(env, core(env, 'configmaps', 'from-curl'));
      return [
        ...expectThat(cm !== undefined, 'configmap from-curl is not in api-lab'),
        ...(await requested(env, [
          { verb: 'get', resource: 'pods', name: 'w1', agent: 'curl' },
          { verb: 'create', resource: 'configmaps', agent: 'curl', code: 201 },
        ])),
      ];
    },
  },
  {
    id: '1.2',
    section: 'Level 1: the API by hand',
    title: 'the eight verbs',
    task: [
      'With curl through kubectl proxy, on ConfigMaps: create, get, list, watch, update, patch,',
      'delete and deletecollection.',
    ],
    commands: [
      ...PROXY,
      `curl -s -X POST -H 'Content-Type: application/json' ${API}/configmaps -d '{"metadata":{"name":"verbs-a","labels":{"learn":"verbs"}}}' >/dev/null`,
      `curl -s -X POST -H 'Content-Type: application/json' ${API}/configmaps -d '{"metadata":{"name":"verbs-b","labels":{"learn":"verbs"}}}' >/dev/null`,
      `curl -s ${API}/configmaps/verbs-a | grep resourceVersion`,
      `curl -s "${API}/configmaps?labelSelector=learn%3Dverbs" | grep '"name"'`,
      `curl -s "${API}/configmaps?watch=1&labelSelector=learn%3Dverbs&timeoutSeconds=2" | cut -c1-80`,
      `curl -s -X PUT -H 'Content-Type: application/json' ${API}/configmaps/verbs-a -d '{"metadata":{"name":"verbs-a","labels":{"learn":"verbs"}},"data":{"put":"whole object"}}' | grep -A1 '"data"'`,
      `curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' ${API}/configmaps/verbs-a -d '{"data":{"patched":"one field"}}' | grep -A2 '"data"'`,
      `curl -s -X DELETE ${API}/configmaps/verbs-a | grep '"name"'`,
      `curl -s -X DELETE "${API}/configmaps?labelSelector=learn%3Dverbs" | grep '"name"'`,
    ],
    watch: [
      'The verb is the HTTP method and the URL together: GET on a name is get, on the collection',
      'list, with watch=1 watch; DELETE on the collection is deletecollection.',
    ],
    cites: [
      APISERVER(
        'pkg/endpoints/request/requestinfo.go',
        258,
        'requestInfo.Verb = "deletecollection"',
        'DELETE on a collection is the verb deletecollection',
      ),
      APISERVER(
        'pkg/endpoints/request/requestinfo.go',
        242,
        'requestInfo.Verb = "watch"',
        'GET with watch=true is the verb watch',
      ),
    ],
    async check(env) {
      return requested(
        env,
        ['create', 'get', 'list', 'watch', 'update', 'patch', 'delete', 'deletecollection'].map(
          (verb) => ({ verb, resource: 'configmaps', agent: 'curl' as const }),
        ),
      );
    },
  },
  {
    id: '1.3',
    section: 'Level 1: the API by hand',
    title: 'kubectl -v=8',
    task: [
      'Get w1 with -v=8, read the request kubectl made and the headers it sent, and record the',
      'Audit-Id the apiserver answered with in a ConfigMap v8.',
    ],
    commands: [
      `kubectl get pod w1 -n api-lab -v=8 2>&1 | tee v8.log | grep -E '"Request"|Accept:|"Response"|Audit-Id'`,
      `kubectl create configmap v8 -n api-lab --from-literal=auditID="$(sed -n 's/^[[:space:]]*Audit-Id: //p' v8.log | head -n 1)"`,
    ],
    reset: ['kubectl delete configmap v8 -n api-lab --ignore-not-found'],
    watch: [
      'kubectl asks for a Table (Accept: application/json;as=Table;v=v1;g=meta.k8s.io): the',
      'columns are made by the server. The Audit-Id header names the request in the audit log.',
    ],
    cites: [],
    async check(env) {
      const id = (await getObj(env, core(env, 'configmaps', 'v8')))?.data?.auditID ?? '';
      if (!/^[0-9a-f-]{36}$/.test(id))
        return ['configmap v8 with the auditID kubectl -v=8 showed is not in api-lab'];
      const events = await env.audit(`"auditID":"${id}"`);
      return expectThat(
        events.some(
          (e) =>
            matches(e, { verb: 'get', resource: 'pods', name: 'w1', agent: 'kubectl' }) &&
            e.requestURI === '/api/v1/namespaces/api-lab/pods/w1',
        ),
        `the audit log's request ${id} is not kubectl's GET of w1`,
      );
    },
  },
];

const level2: Exercise[] = [
  {
    id: '2.1',
    section: 'Level 2: resourceVersion and watches',
    title: '410 Gone on an ancient resourceVersion',
    task: [
      'Watch ConfigMaps from resourceVersion 1. On a young cluster the watch cache still holds every',
      'event since its apiserver started, so write to one ConfigMap until RV 1 has left it.',
    ],
    commands: [
      ...PROXY,
      ...PAST_THE_WINDOW,
      "kubectl get --raw '/api/v1/namespaces/api-lab/configmaps?watch=1&resourceVersion=1&timeoutSeconds=5'",
    ],
    reset: ['kubectl delete configmap churn -n api-lab --ignore-not-found'],
    watch: [
      'The watch is answered 200, then one ERROR event: a Status with code 410, reason Expired,',
      '"too old resource version: 1 (N)", N the oldest the watch cache still holds.',
    ],
    cites: [
      live(
        APISERVER(
          'pkg/storage/cacher/watch_cache.go',
          917,
          'too old resource version: %d (%d)',
          'the watch cache refuses an RV older than its window',
        ),
      ),
      APIMACHINERY(
        'pkg/api/errors/errors.go',
        278,
        'metav1.StatusReasonExpired',
        'Expired is 410 Gone',
      ),
    ],
    async check(env) {
      return requested(env, [
        {
          verb: 'watch',
          resource: 'configmaps',
          agent: 'kubectl',
          query: { watch: '1', resourceVersion: '1' },
        },
      ]);
    },
  },
  {
    id: '2.2',
    section: 'Level 2: resourceVersion and watches',
    title: 'a BOOKMARK event',
    task: ['Watch ConfigMaps with allowWatchBookmarks=true for 10 s.'],
    commands: [
      "kubectl get --raw '/api/v1/namespaces/api-lab/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=10' | grep BOOKMARK",
    ],
    watch: [
      'A BOOKMARK carries only a resourceVersion: where to resume. It comes 2 s before the timeout.',
    ],
    cites: [
      APISERVER(
        'pkg/storage/cacher/cache_watcher.go',
        225,
        'right before the watcher timeout',
        'a bookmark is sent 2 s before the watch times out',
      ),
    ],
    async check(env) {
      return requested(env, [
        {
          verb: 'watch',
          resource: 'configmaps',
          agent: 'kubectl',
          query: { watch: '1', allowWatchBookmarks: 'true' },
        },
      ]);
    },
  },
];

const DEPENDENT = (name: string, owner: string, uid: string) => `kubectl apply -n api-lab -f - <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  ownerReferences:
  - apiVersion: v1
    kind: ConfigMap
    name: ${owner}
    uid: ${uid}
EOF`;

/** Deleted by the garbage collector (its user, not the admin's), per the audit log. */
async function collected(env: LearnEnv, name: string): Promise<Findings> {
  const events = await env.audit(`"name":"${name}"`);
  return expectThat(
    events.some(
      (e) =>
        matches(e, { verb: 'delete', resource: 'configmaps', name, code: 200 }) &&
        /garbage-collector|kube-controller-manager/.test(e.user.username),
    ),
    `the audit log shows no delete of configmap ${name} by the garbage collector`,
  );
}

const level3: Exercise[] = [
  {
    id: '3.1',
    section: 'Level 3: spec, status and ownership',
    title: 'status through /status, and conditions',
    task: [
      'Add a condition of your own to w1 through its /status subresource, and read the conditions.',
    ],
    commands: [
      `kubectl patch pod w1 -n api-lab --subresource=status --type=strategic -p '{"status":{"conditions":[{"type":"learn.hardwire.dev/Checked","status":"True"}]}}'`,
      `kubectl get pod w1 -n api-lab -o jsonpath='{range .status.conditions[*]}{.type}={.status}{"\\n"}{end}'`,
    ],
    watch: ['The kubelet keeps a condition type it does not own; the list merges on "type".'],
    cites: [
      KUBERNETES(
        'pkg/registry/core/pod/strategy.go',
        304,
        'newPod.Spec = oldPod.Spec',
        'a write to /status keeps the old spec',
      ),
    ],
    async check(env) {
      const p = await getObj<Pod>(env, core(env, 'pods', 'w1'));
      return [
        ...expectThat(
          p?.status.conditions?.some(
            (c) => c.type === 'learn.hardwire.dev/Checked' && c.status === 'True',
          ) === true,
          'w1 has no condition learn.hardwire.dev/Checked=True',
        ),
        ...(await requested(env, [
          { verb: 'patch', resource: 'pods', name: 'w1', subresource: 'status', code: 200 },
        ])),
      ];
    },
  },
  {
    id: '3.2',
    section: 'Level 3: spec, status and ownership',
    title: 'a status write through the main endpoint, silently dropped',
    task: ['Patch a condition into w1 without --subresource=status, and look for it.'],
    commands: [
      `kubectl patch pod w1 -n api-lab --type=strategic -p '{"status":{"conditions":[{"type":"learn.hardwire.dev/Dropped","status":"True"}]}}'`,
      `kubectl get pod w1 -n api-lab -o jsonpath='{.status.conditions[*].type}{"\\n"}'`,
    ],
    watch: [
      '"patched (no change)", exit 0, and no Dropped condition: the strategy copied the old status over yours.',
    ],
    cites: [
      KUBERNETES(
        'pkg/registry/core/pod/strategy.go',
        107,
        'newPod.Status = oldPod.Status',
        'an update of the main resource keeps the old status',
      ),
    ],
    async check(env) {
      const p = await getObj<Pod>(env, core(env, 'pods', 'w1'));
      return [
        ...expectThat(
          p !== undefined &&
            !p.status.conditions?.some((c) => c.type === 'learn.hardwire.dev/Dropped'),
          'w1 is missing or has a Dropped condition',
        ),
        ...(await requested(env, [{ verb: 'patch', resource: 'pods', name: 'w1', code: 200 }])),
      ];
    },
  },
  {
    id: '3.3',
    section: 'Level 3: spec, status and ownership',
    title: 'ownerReferences: the dependent goes with its owner',
    task: ['Make a ConfigMap owned by another, delete the owner, and watch the dependent go.'],
    commands: [
      'kubectl create configmap owner -n api-lab',
      "OWNER_UID=$(kubectl get configmap owner -n api-lab -o jsonpath='{.metadata.uid}')",
      DEPENDENT('dependent', 'owner', '$OWNER_UID'),
      'kubectl delete configmap owner -n api-lab',
      'kubectl wait --for=delete configmap/dependent -n api-lab --timeout=60s',
    ],
    reset: ['kubectl delete configmap owner dependent -n api-lab --ignore-not-found'],
    watch: ["The dependent is deleted by the controller-manager's garbage collector, not by you."],
    cites: [
      KUBERNETES(
        'pkg/controller/garbagecollector/garbagecollector.go',
        447,
        'owner.GetUID() != reference.UID',
        'an owner is absent when no object with its uid exists',
      ),
    ],
    check: (env) => collected(env, 'dependent'),
  },
  {
    id: '3.4',
    section: 'Level 3: spec, status and ownership',
    title: 'orphaning',
    task: [
      'Delete an owner with --cascade=orphan: the dependent stays, its ownerReference removed.',
    ],
    commands: [
      'kubectl create configmap owner2 -n api-lab',
      "OWNER_UID=$(kubectl get configmap owner2 -n api-lab -o jsonpath='{.metadata.uid}')",
      DEPENDENT('dependent2', 'owner2', '$OWNER_UID'),
      'kubectl delete configmap owner2 -n api-lab --cascade=orphan',
      'kubectl get configmap dependent2 -n api-lab -o jsonpath=\'{.metadata.ownerReferences}{"\\n"}\'',
    ],
    reset: ['kubectl delete configmap owner2 dependent2 -n api-lab --ignore-not-found'],
    watch: [
      'The owner gets the orphan finalizer first; the garbage collector removes the references, then the finalizer.',
    ],
    cites: [
      APISERVER(
        'pkg/registry/generic/registry/store.go',
        891,
        'func shouldOrphanDependents',
        'propagationPolicy Orphan adds the orphan finalizer',
      ),
      KUBERNETES(
        'pkg/controller/garbagecollector/garbagecollector.go',
        683,
        'func (gc *GarbageCollector) orphanDependents',
        'the references are removed from each dependent',
      ),
    ],
    async check(env) {
      const owner = await getObj(env, core(env, 'configmaps', 'owner2'));
      const dep = await getObj(env, core(env, 'configmaps', 'dependent2'));
      return [
        ...expectThat(owner === undefined, 'owner2 is still there'),
        ...expectThat(dep !== undefined, 'dependent2 is gone: it was not orphaned'),
        ...expectThat(
          !dep?.metadata.ownerReferences?.length,
          'dependent2 still has an ownerReference',
        ),
        ...(await requested(env, [
          { verb: 'delete', resource: 'configmaps', name: 'owner2', agent: 'kubectl' },
        ])),
      ];
    },
  },
  {
    id: '3.5',
    section: 'Level 3: spec, status and ownership',
    title: 'the uid trap',
    task: [
      'Point a dependent at an owner that exists, by name, with a uid that is not its uid: the',
      'garbage collector deletes the dependent.',
    ],
    commands: [
      'kubectl create configmap owner3 -n api-lab',
      DEPENDENT('dependent3', 'owner3', '00000000-0000-0000-0000-000000000000'),
      'kubectl wait --for=delete configmap/dependent3 -n api-lab --timeout=60s',
      'kubectl get configmap owner3 -n api-lab',
    ],
    reset: ['kubectl delete configmap owner3 dependent3 -n api-lab --ignore-not-found'],
    watch: ['An owner is its uid, not its name: a recreated owner of the same name owns nothing.'],
    cites: [
      KUBERNETES(
        'pkg/controller/garbagecollector/garbagecollector.go',
        447,
        'owner.GetUID() != reference.UID',
        'the name matches, the uid does not: dangling',
      ),
    ],
    async check(env) {
      return [
        ...expectThat(
          (await getObj(env, core(env, 'configmaps', 'owner3'))) !== undefined,
          'owner3 is not there',
        ),
        ...(await collected(env, 'dependent3')),
      ];
    },
  },
  {
    id: '3.6',
    section: 'Level 3: spec, status and ownership',
    title: 'a finalizer that blocks a delete, then releases it',
    task: ['Give a ConfigMap a finalizer, delete it, see it stay, remove the finalizer.'],
    commands: [
      'kubectl create configmap guarded -n api-lab',
      `kubectl patch configmap guarded -n api-lab --type=merge -p '{"metadata":{"finalizers":["learn.hardwire.dev/hold"]}}'`,
      'kubectl delete configmap guarded -n api-lab --wait=false',
      `kubectl get configmap guarded -n api-lab -o jsonpath='{.metadata.deletionTimestamp}{"\\n"}'`,
      `kubectl patch configmap guarded -n api-lab --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]'`,
      'kubectl get configmap guarded -n api-lab',
    ],
    reset: [
      `kubectl patch configmap guarded -n api-lab --type=merge -p '{"metadata":{"finalizers":null}}' 2>/dev/null`,
      'kubectl delete configmap guarded -n api-lab --ignore-not-found',
    ],
    watch: [
      'The delete only sets deletionTimestamp; the object goes when its last finalizer is removed.',
    ],
    cites: [
      APISERVER(
        'pkg/registry/generic/registry/store.go',
        1052,
        'func (e *Store) updateForGracefulDeletionAndFinalizers',
        'a delete with finalizers is an update that sets deletionTimestamp',
      ),
    ],
    async check(env) {
      return [
        ...expectThat(
          (await getObj(env, core(env, 'configmaps', 'guarded'))) === undefined,
          'configmap guarded is still there',
        ),
        ...(await requested(env, [
          { verb: 'delete', resource: 'configmaps', name: 'guarded', code: 200 },
          { verb: 'patch', resource: 'configmaps', name: 'guarded', code: 200 },
        ])),
      ];
    },
  },
];

const level4: Exercise[] = [
  {
    id: '4.1',
    section: 'Level 4: patch, apply and concurrency',
    title: 'strategic merge against JSON merge on a list',
    task: [
      'Add a container to own-demo with a strategic merge patch, then send the same shape as a JSON',
      'merge patch.',
    ],
    commands: [
      `kubectl patch deploy own-demo -n api-lab --type=strategic -p '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox","command":["sleep","3600"]}]}}}}'`,
      `kubectl get deploy own-demo -n api-lab -o jsonpath='{.spec.template.spec.containers[*].name}{"\\n"}'`,
      `kubectl patch deploy own-demo -n api-lab --type=merge -p '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx"}]}}}}'`,
      `kubectl get deploy own-demo -n api-lab -o jsonpath='{.spec.template.spec.containers[*].name}{"\\n"}'`,
    ],
    watch: [
      'Strategic merge merges the list on "name" (side nginx: the patch\'s element first); JSON merge',
      'replaces it (nginx).',
    ],
    cites: [
      APISERVER(
        'pkg/endpoints/handlers/patch.go',
        753,
        'strategicpatch.StrategicMergeMapPatch',
        'strategic merge: lists merged by their patchMergeKey',
      ),
      APISERVER(
        'pkg/endpoints/handlers/patch.go',
        427,
        'jsonpatch.MergePatch',
        'JSON merge (RFC 7386): a list is replaced whole',
      ),
    ],
    async check(env) {
      const d = await getObj<Deployment>(env, apps(env, 'deployments', 'own-demo'));
      const events = await env.audit('"name":"own-demo"');
      const patches = events.filter((e) =>
        matches(e, { verb: 'patch', resource: 'deployments', name: 'own-demo', code: 200 }),
      );
      return [
        ...expectThat(
          patches.length >= 2,
          `the audit log shows ${patches.length} patches of own-demo, not two`,
        ),
        ...expectThat(
          d?.spec.template.spec.containers.map((c) => c.name).join(' ') === 'nginx',
          "own-demo's containers are not back to nginx alone (the JSON merge patch replaces the list)",
        ),
      ];
    },
  },
  {
    id: '4.2',
    section: 'Level 4: patch, apply and concurrency',
    title: 'JSON patch with test',
    task: ['A JSON patch that tests a value before it replaces it, sent twice.'],
    commands: [
      'kubectl create configmap jp -n api-lab --from-literal=mode=a',
      `kubectl patch configmap jp -n api-lab --type=json -p '[{"op":"test","path":"/data/mode","value":"a"},{"op":"replace","path":"/data/mode","value":"b"}]'`,
      `kubectl patch configmap jp -n api-lab --type=json -p '[{"op":"test","path":"/data/mode","value":"a"},{"op":"replace","path":"/data/mode","value":"b"}]'`,
    ],
    reset: ['kubectl delete configmap jp -n api-lab --ignore-not-found'],
    watch: ['The second is refused whole, 422: a failed test applies nothing.'],
    cites: [
      APISERVER(
        'pkg/endpoints/handlers/patch.go',
        403,
        'jsonpatch.DecodePatch',
        'RFC 6902 operations, test among them',
      ),
    ],
    async check(env) {
      return requested(env, [
        { verb: 'patch', resource: 'configmaps', name: 'jp', code: 200 },
        { verb: 'patch', resource: 'configmaps', name: 'jp', code: 422 },
      ]);
    },
  },
  {
    id: '4.3',
    section: 'Level 4: patch, apply and concurrency',
    title: 'server-side apply and its conflict',
    task: ['alice applies replicas 1; bob applies replicas 2 and conflicts; bob forces it.'],
    commands: [
      ...['alice', 'bob', 'bob --force-conflicts'].map(
        (who, i) => `kubectl apply --server-side --field-manager=${who} -n api-lab -f - <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ssa-demo
spec:
  replicas: ${i === 0 ? 1 : 2}
  selector: {matchLabels: {app: ssa-demo}}
  template:
    metadata: {labels: {app: ssa-demo}}
    spec:
      containers: [{name: nginx, image: nginx}]
EOF`,
      ),
      `kubectl get deploy ssa-demo -n api-lab --show-managed-fields -o jsonpath='{range .metadata.managedFields[*]}{.manager}{" "}{.operation}{"\\n"}{end}'`,
    ],
    reset: ['kubectl delete deploy ssa-demo -n api-lab --ignore-not-found'],
    watch: [
      '409 "Apply failed with 1 conflict: conflict with "alice": .spec.replicas"; forced, bob owns it.',
    ],
    cites: [
      APIMACHINERY(
        'pkg/util/managedfields/internal/conflict.go',
        47,
        'Apply failed with 1 conflict',
        'the message, built from the conflicting manager and path',
      ),
    ],
    async check(env) {
      const d = await getObj<Deployment>(env, apps(env, 'deployments', 'ssa-demo'));
      const bob = d?.metadata.managedFields?.find((m) => m.manager === 'bob');
      return [
        ...expectThat(d?.spec.replicas === 2, 'ssa-demo does not have the 2 replicas bob applied'),
        ...expectThat(
          JSON.stringify(bob?.fieldsV1 ?? {}).includes('f:replicas'),
          'bob does not own .spec.replicas',
        ),
        ...(await requested(env, [
          { verb: 'patch', resource: 'deployments', name: 'ssa-demo', code: 409 },
        ])),
      ];
    },
  },
  {
    id: '4.4',
    section: 'Level 4: patch, apply and concurrency',
    title: 'optimistic concurrency: 409 on a stale replace',
    task: ['Save a ConfigMap, change it, then replace it with the saved copy.'],
    commands: [
      'kubectl create configmap occ -n api-lab --from-literal=v=1',
      'kubectl get configmap occ -n api-lab -o yaml > stale.yaml',
      `kubectl patch configmap occ -n api-lab --type=merge -p '{"data":{"v":"2"}}'`,
      'kubectl replace -f stale.yaml',
    ],
    reset: ['kubectl delete configmap occ -n api-lab --ignore-not-found'],
    watch: ['The saved copy carries the old resourceVersion: "the object has been modified", 409.'],
    cites: [
      APISERVER(
        'pkg/registry/generic/registry/store.go',
        744,
        'fmt.Errorf(OptimisticLockErrorMsg)',
        'a stale resourceVersion on update is a Conflict',
      ),
    ],
    async check(env) {
      return requested(env, [{ verb: 'update', resource: 'configmaps', name: 'occ', code: 409 }]);
    },
  },
];

const level5: Exercise[] = [
  {
    id: '5.1',
    section: 'Level 5: reading at scale, and a CRD',
    title: 'pagination',
    task: ['Make 10 ConfigMaps and list them 3 at a time, following the continue token.'],
    commands: [
      'for i in 0 1 2 3 4 5 6 7 8 9; do kubectl create configmap page-$i -n api-lab --from-literal=i=$i; done',
      'TOKEN=$(kubectl get --raw \'/api/v1/namespaces/api-lab/configmaps?limit=3&labelSelector=\' | sed -n \'s/.*"continue":"\\([^"]*\\)".*/\\1/p\')',
      'echo "continue=$TOKEN"',
      'kubectl get --raw "/api/v1/namespaces/api-lab/configmaps?limit=3&continue=$TOKEN" | grep -o \'"name":"[^"]*"\'',
    ],
    reset: [
      'kubectl delete configmap -n api-lab page-0 page-1 page-2 page-3 page-4 page-5 page-6 page-7 page-8 page-9 --ignore-not-found',
    ],
    watch: [
      'The token is base64 JSON: the key to start after and the resourceVersion the list is consistent at.',
    ],
    cites: [
      APISERVER(
        'pkg/storage/continue.go',
        83,
        'func EncodeContinue',
        'the token: start key and resourceVersion',
      ),
    ],
    async check(env) {
      return requested(env, [
        { verb: 'list', resource: 'configmaps', query: { limit: '3' }, code: 200 },
        { verb: 'list', resource: 'configmaps', query: { continue: '*' }, code: 200 },
      ]);
    },
  },
  {
    id: '5.2',
    section: 'Level 5: reading at scale, and a CRD',
    title: 'server-side selectors',
    task: [
      "List own-demo's Pods by label, and Running Pods by field, both filtered by the server.",
    ],
    commands: [
      'kubectl get pods -n api-lab -l app=own-demo',
      'kubectl get pods -n api-lab --field-selector=status.phase=Running',
    ],
    watch: ['Both travel as query parameters (labelSelector, fieldSelector): the server filters.'],
    cites: [],
    async check(env) {
      return requested(env, [
        {
          verb: 'list',
          resource: 'pods',
          query: { labelSelector: 'app=own-demo' },
          agent: 'kubectl',
        },
        {
          verb: 'list',
          resource: 'pods',
          query: { fieldSelector: 'status.phase=Running' },
          agent: 'kubectl',
        },
      ]);
    },
  },
  {
    id: '5.3',
    section: 'Level 5: reading at scale, and a CRD',
    title: 'priority and fairness: which FlowSchema took my request',
    task: [
      'Read the X-Kubernetes-PF-FlowSchema-UID header of one request, and find that FlowSchema.',
    ],
    commands: [
      ...PROXY,
      `FS=$(curl -s -D - -o /dev/null ${API}/pods | sed -n 's/^X-Kubernetes-Pf-Flowschema-Uid: \\([^\\r]*\\).*/\\1/ip')`,
      'echo "flowschema uid $FS"',
      `kubectl get flowschemas -o jsonpath="{range .items[?(@.metadata.uid=='$FS')]}{.metadata.name} {.spec.priorityLevelConfiguration.name}{'\\n'}{end}"`,
    ],
    watch: [
      "hardwire's admin is in kubeadm:cluster-admins, not system:masters (as kubeadm's since v1.29),",
      'so its requests are not exempt: global-default classifies them, and they can be queued.',
    ],
    cites: [],
    async check(env) {
      const events = await env.audit('flowschemas');
      return expectThat(
        events.some(
          (e) =>
            e.verb === 'list' &&
            e.objectRef?.resource === 'flowschemas' &&
            (e.userAgent ?? '').startsWith('kubectl/'),
        ),
        'the audit log shows no list of flowschemas by kubectl',
      );
    },
  },
  {
    id: '5.4',
    section: 'Level 5: reading at scale, and a CRD',
    title: 'a CRD by hand: printer columns, OpenAPI bounds, a CEL rule, a status subresource',
    task: [
      'Write a CRD for widgets with a size between 1 and 10, a CEL rule that size <= max, printer',
      'columns and a status subresource. Create one that passes, two that fail, and set its status.',
    ],
    commands: [
      `kubectl apply -f - <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.learn.hardwire.dev
spec:
  group: learn.hardwire.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Phase, type: string, jsonPath: .status.phase}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: self.size <= self.max
              message: size must not exceed max
            properties:
              size: {type: integer, minimum: 1, maximum: 10}
              max: {type: integer}
          status:
            type: object
            properties:
              phase: {type: string}
EOF`,
      'kubectl wait --for=condition=Established crd/widgets.learn.hardwire.dev --timeout=30s',
      ...[
        ['w-ok', 3, 5],
        ['w-big', 11, 20],
        ['w-over', 6, 5],
      ].map(
        ([n, size, max]) =>
          `kubectl apply -n api-lab -f - <<'EOF'\napiVersion: learn.hardwire.dev/v1\nkind: Widget\nmetadata: {name: ${n}}\nspec: {size: ${size}, max: ${max}}\nEOF`,
      ),
      `kubectl patch widget w-ok -n api-lab --subresource=status --type=merge -p '{"status":{"phase":"Ready"}}'`,
      'kubectl get widgets -n api-lab',
    ],
    reset: ['kubectl delete crd widgets.learn.hardwire.dev --ignore-not-found'],
    watch: [
      'w-big fails the OpenAPI bound (maximum 10), w-over the CEL rule, each 422; kubectl get shows',
      'the columns SIZE and PHASE, made by the server.',
    ],
    cites: [
      APIEXTENSIONS(
        'pkg/registry/customresource/tableconvertor/tableconvertor.go',
        41,
        'func New(crdColumns',
        'the printer columns become the Table the server returns',
      ),
    ],
    async check(env) {
      interface Widget extends Obj {
        status?: { phase?: string };
      }
      const w = await getObj<Widget>(
        env,
        `/apis/learn.hardwire.dev/v1/namespaces/${env.ns}/widgets/w-ok`,
      );
      const events = await env.audit('"resource":"widgets"');
      const refused = events
        .filter((e) => e.verb === 'patch' || e.verb === 'create')
        .filter((e) => e.responseStatus?.code === 422);
      return [
        ...expectThat(
          w?.status?.phase === 'Ready',
          'widget w-ok is missing or its status.phase is not Ready',
        ),
        ...expectThat(
          refused.length >= 2,
          `the audit log shows ${refused.length} widget writes refused with 422, not two`,
        ),
      ];
    },
  },
];

export const TASKS: Exercise[] = [...level0, ...level1, ...level2, ...level3, ...level4, ...level5];
