// Module 3.5 of the curriculum, reads at scale: "too old resource version" from each of its two
// causes (the watch cache's window; etcd's compaction, done on demand the way the apiserver does
// it), the continue token that expires with a compaction, which reads reach etcd, and the
// FlowSchema that classified one's own request. `etcdctl` is the first etcd host's (env.ts).
// A compaction on the lab is safe to repeat: each run compacts at a revision its own write made,
// newer than any before, and bumps compact_rev_key first so the apiservers' compactors stand down.
import { APISERVER, live } from './cites.ts';
import { core, expectThat, getObj, recorded, requested, type AuditDetail } from './read.ts';
import type { Exercise, LearnEnv } from './types.ts';
import { PAST_THE_WINDOW, PROXY } from './lines.ts';

const SECTION = 'Module 3.5: reads, watches and their limits';
const CMS = '/api/v1/namespaces/api-lab/configmaps';

/** Compaction as the apiserver does it (etcd3/compact.go): compact_rev_key first, then the compaction; then the cacher's compactor's next poll. */
const COMPACT = [
  'kubectl create configmap compact-mark -n api-lab',
  `REV=$(kubectl get configmap compact-mark -n api-lab -o jsonpath='{.metadata.resourceVersion}')`,
  'etcdctl put compact_rev_key $REV',
  'etcdctl compact $REV',
  'sleep 17',
];

/** The revision etcd's history starts at, as the apiservers record it. */
async function compactedAt(env: LearnEnv): Promise<number> {
  return Number((await env.etcdctl(['get', 'compact_rev_key', '--print-value-only'])).trim() || 0);
}

/** Lists of configmaps in api-lab with this query parameter, answered 410, and their resourceVersion (or the continue token's). */
async function expired(env: LearnEnv, param: string): Promise<AuditDetail[]> {
  const events = (await env.audit(`"namespace":"${env.ns}"`)) as AuditDetail[];
  return events.filter(
    (e) =>
      e.verb === 'list' &&
      e.objectRef?.resource === 'configmaps' &&
      e.responseStatus?.code === 410 &&
      new URL(e.requestURI, 'https://x').searchParams.has(param),
  );
}

/** The resourceVersion a continue token was issued at (base64url JSON, storage/continue.go). */
function tokenRV(token: string): number {
  try {
    return Number((JSON.parse(Buffer.from(token, 'base64url').toString()) as { rv?: number }).rv);
  } catch {
    return Number.NaN;
  }
}

export const MODULE_3_5: Exercise[] = [
  {
    id: '3.5a',
    section: SECTION,
    title: '"too old resource version": the watch cache\'s window',
    task: [
      'The watch cache keeps a ring of recent events per resource. Write to one ConfigMap until a',
      'watch from resourceVersion 1 is refused (on a young cluster the ring still holds everything),',
      "read the cache's oldest from the error, then watch from one before it and from it. Record the",
      'oldest in a ConfigMap watch-window.',
    ],
    commands: [
      ...PROXY,
      ...PAST_THE_WINDOW,
      `kubectl get --raw /metrics | grep '^watch_cache_capacity{group="",resource="configmaps"}'`,
      `kubectl get --raw '${CMS}?watch=1&resourceVersion=1&timeoutSeconds=3' | tee window.json | cut -c1-200`,
      `OLDEST=$(sed -n 's/.*too old resource version: 1 (\\([0-9]*\\)).*/\\1/p' window.json); echo "the watch cache starts at $OLDEST"`,
      `kubectl get --raw "${CMS}?watch=1&resourceVersion=$((OLDEST-1))&timeoutSeconds=3" | cut -c1-200`,
      `kubectl get --raw "${CMS}?watch=1&resourceVersion=$OLDEST&timeoutSeconds=3" | cut -c1-100 | head -n 3`,
      'echo "etcd compacted at $(etcdctl get compact_rev_key --print-value-only)"',
      'kubectl create configmap watch-window -n api-lab --from-literal=oldest=$OLDEST',
    ],
    reset: ['kubectl delete configmap watch-window churn -n api-lab --ignore-not-found'],
    watch: [
      'Once the ring is full and its oldest events are older than 75 s, each new event pushes the',
      'oldest out. Then the watch is answered 200 and one ERROR event: code 410, reason Expired,',
      '"too old resource version: 1 (N)". A watch from N is served, from N-1 it is refused, whatever',
      "etcd still holds: the two numbers are the cache's wording, and a watch never reads etcd's history.",
    ],
    cites: [
      live(
        APISERVER(
          'pkg/storage/cacher/watch_cache.go',
          917,
          'too old resource version: %d (%d)',
          "the watch cache refuses an RV older than its window, and names the window's start",
        ),
      ),
      APISERVER(
        'pkg/storage/cacher/watch_cache.go',
        365,
        'w.removedEventSinceRelist = true',
        'a full ring drops its oldest event (it doubles instead while the oldest is under 75 s old)',
      ),
      APISERVER(
        'pkg/storage/cacher/watch_cache.go',
        889,
        'oldest = w.listResourceVersion + 1',
        'with no event dropped since the last list, the window starts just after that list',
      ),
    ],
    async check(env) {
      const rec = await recorded(env, 'watch-window');
      const n = Number(rec?.oldest);
      if (!rec || !(n > 1))
        return ['configmap watch-window with the oldest revision is not in api-lab'];
      return requested(env, [
        {
          verb: 'watch',
          resource: 'configmaps',
          agent: 'kubectl',
          query: { resourceVersion: '1' },
        },
        {
          verb: 'watch',
          resource: 'configmaps',
          agent: 'kubectl',
          query: { resourceVersion: String(n - 1) },
        },
        {
          verb: 'watch',
          resource: 'configmaps',
          agent: 'kubectl',
          query: { resourceVersion: String(n) },
        },
      ]);
    },
  },
  {
    id: '3.5b',
    section: SECTION,
    title: '"too old resource version": etcd compaction, on demand',
    task: [
      'Note a resourceVersion, compact etcd past it the way the apiserver does (compact_rev_key, then',
      'compact), wait for the cacher to notice, then list at exactly that resourceVersion, and watch',
      'from it.',
    ],
    commands: [
      'kubectl create configmap before-compaction -n api-lab',
      `RV=$(kubectl get configmap before-compaction -n api-lab -o jsonpath='{.metadata.resourceVersion}'); echo "RV=$RV"`,
      `kubectl get --raw "${CMS}?resourceVersion=$RV&resourceVersionMatch=Exact" | cut -c1-100`,
      ...COMPACT,
      `kubectl get --raw "${CMS}?resourceVersion=$RV&resourceVersionMatch=Exact"`,
      `kubectl get --raw "${CMS}?watch=1&resourceVersion=$RV&timeoutSeconds=2" | cut -c1-100`,
    ],
    reset: [
      'kubectl delete configmap before-compaction compact-mark -n api-lab --ignore-not-found',
    ],
    watch: [
      'Before: the list at RV is served (from a snapshot of the watch cache). After: 410 Expired,',
      '"The resourceVersion for the provided list is too old." That is etcd3/errors.go\'s wording,',
      'not the cache\'s "too old resource version: %d": once the cacher\'s compactor (every 15 s) drops',
      'the snapshots, the list is sent to etcd, which answers ErrCompacted; and a 410 from the cache',
      "is retried at etcd as well. The watch from the same RV is still served: from the cache's ring.",
    ],
    cites: [
      APISERVER(
        'pkg/storage/etcd3/compact.go',
        223,
        'clientv3.OpPut(compactRevKey, strconv.FormatInt(rev, 10))',
        "the apiserver's compaction: compact_rev_key first (its version is the other apiservers' lease)",
      ),
      APISERVER(
        'pkg/storage/etcd3/compact.go',
        247,
        'client.Compact(ctx, rev)',
        'then the compaction itself',
      ),
      APISERVER(
        'pkg/storage/cacher/compactor.go',
        30,
        'compactorPollPeriod = 15 * time.Second',
        'the watch cache learns of it on its next poll and drops older snapshots',
      ),
      APISERVER(
        'pkg/storage/etcd3/errors.go',
        53,
        'The resourceVersion for the provided list is too old.',
        'the wording a list gets from etcd at a compacted revision',
      ),
      live(
        APISERVER(
          'pkg/storage/etcd3/errors.go',
          72,
          'return errors.NewResourceExpired(expired)',
          "etcd answered ErrCompacted: the 410 with that wording is made here (store.go's GetList calls it)",
        ),
      ),
      live(
        APISERVER(
          'pkg/storage/cacher/delegator.go',
          190,
          'return c.storage.GetList(ctx, key, opts, listObj)',
          "the cache holds no snapshot at that RV any more (cacher.go's shouldDelegateExactRV), so the list is sent to etcd",
        ),
      ),
      APISERVER(
        'pkg/storage/cacher/watch_cache.go',
        610,
        'errors.NewResourceExpired(fmt.Sprintf("too old resource version: %d", resourceVersion))',
        "the cache's own wording for an exact-RV list it has no snapshot for...",
      ),
      APISERVER(
        'pkg/storage/cacher/delegator.go',
        216,
        'return c.storage.GetList(ctx, key, opts, listObj)',
        '...never seen by a client: an Expired from the cache is retried at etcd',
      ),
    ],
    async check(env) {
      const mark = await getObj(env, core(env, 'configmaps', 'before-compaction'));
      if (!mark) return ['configmap before-compaction is not in api-lab'];
      const rv = Number(mark.metadata.resourceVersion);
      const at = await compactedAt(env);
      return [
        ...expectThat(rv < at, `etcd is compacted at ${at}, not past before-compaction's ${rv}`),
        ...expectThat(
          (await expired(env, 'resourceVersionMatch')).some(
            (e) =>
              Number(new URL(e.requestURI, 'https://x').searchParams.get('resourceVersion')) === rv,
          ),
          `the audit log shows no list of configmaps at exactly resourceVersion ${rv} answered 410`,
        ),
      ];
    },
  },
  {
    id: '3.5c',
    section: SECTION,
    title: "pagination's continue token, expired by a compaction",
    task: [
      'Take the first page of ConfigMaps (limit=2) and keep its continue token; compact past it;',
      'ask for the next page with the token.',
    ],
    commands: [
      'for i in 0 1 2 3; do kubectl create configmap page-c$i -n api-lab; done',
      `TOKEN=$(kubectl get --raw '${CMS}?limit=2' | sed -n 's/.*"continue":"\\([^"]*\\)".*/\\1/p'); echo "$TOKEN"`,
      ...COMPACT,
      `kubectl get --raw "${CMS}?limit=2&continue=$TOKEN"`,
    ],
    reset: [
      'kubectl delete configmap page-c0 page-c1 page-c2 page-c3 compact-mark -n api-lab --ignore-not-found',
    ],
    watch: [
      '410 Expired: "The provided continue parameter is too old to display a consistent list result.',
      'You can start a new list without the continue parameter, or use the continue token in this',
      'response..." The Status carries a new token (resourceVersion -1): continue at the latest',
      'revision, knowing the pages may not agree.',
    ],
    cites: [
      APISERVER(
        'pkg/storage/etcd3/errors.go',
        57,
        'inconsistentContinue string = "The provided continue parameter is too old "',
        "a continue token's revision was compacted",
      ),
      APISERVER(
        'pkg/storage/etcd3/errors.go',
        81,
        'storage.EncodeContinue(continueKey, keyPrefix, -1)',
        'the new token in the 410: the same key, at the latest revision',
      ),
      APISERVER(
        'pkg/storage/continue.go',
        83,
        'func EncodeContinue',
        'a token is the key to start after and the revision of the first page',
      ),
    ],
    async check(env) {
      const last = await getObj(env, core(env, 'configmaps', 'page-c3'));
      if (!last) return ['configmap page-c3 is not in api-lab'];
      const made = Number(last.metadata.resourceVersion);
      const at = await compactedAt(env);
      return expectThat(
        (await expired(env, 'continue')).some((e) => {
          const rv = tokenRV(new URL(e.requestURI, 'https://x').searchParams.get('continue') ?? '');
          return rv >= made && rv < at;
        }),
        `the audit log shows no list with a token issued after page-c3 (${made}) and before etcd's compaction (${at}) answered 410`,
      );
    },
  },
  {
    id: '3.5d',
    section: SECTION,
    title: 'which reads reach etcd: resourceVersion=0 against a quorum read',
    task: [
      'GET one ConfigMap five times without a resourceVersion and five times with resourceVersion=0,',
      "reading the apiserver's etcd request counter around each; then list both ways and read the",
      "watch cache's consistent-read counter. Record the two GET counts in a ConfigMap reads-etcd.",
    ],
    commands: [
      'kubectl create configmap reads-target -n api-lab',
      `GETS() { kubectl get --raw /metrics | sed -n 's/^etcd_requests_total{group="",operation="get",resource="configmaps"} //p'; }`,
      `CONSISTENT() { kubectl get --raw /metrics | sed -n 's/^apiserver_watch_cache_consistent_read_total{fallback="false",group="",resource="configmaps",success="true"} //p'; }`,
      `B=$(GETS); for i in 1 2 3 4 5; do kubectl get --raw ${CMS}/reads-target >/dev/null; done; Q=$(( $(GETS) - B )); echo "5 GETs, no resourceVersion: $Q etcd gets"`,
      `B=$(GETS); for i in 1 2 3 4 5; do kubectl get --raw '${CMS}/reads-target?resourceVersion=0' >/dev/null; done; Z=$(( $(GETS) - B )); echo "5 GETs at resourceVersion=0: $Z etcd gets"`,
      `B=$(CONSISTENT); for i in 1 2 3 4 5; do kubectl get --raw ${CMS} >/dev/null; done; echo "5 lists, no resourceVersion: $(( $(CONSISTENT) - \${B:-0} )) consistent reads from the watch cache"`,
      `B=$(CONSISTENT); for i in 1 2 3 4 5; do kubectl get --raw '${CMS}?resourceVersion=0' >/dev/null; done; echo "5 lists at resourceVersion=0: $(( $(CONSISTENT) - \${B:-0} )) consistent reads"`,
      'kubectl create configmap reads-etcd -n api-lab --from-literal=quorum-gets=$Q --from-literal=rv0-gets=$Z',
    ],
    reset: ['kubectl delete configmap reads-target reads-etcd -n api-lab --ignore-not-found'],
    watch: [
      'A GET with no resourceVersion is read from etcd (5 gets); at resourceVersion=0 from the watch',
      'cache (0). A list with no resourceVersion is served by the cache too, once it has asked etcd',
      'for its current revision and caught up with it (5 consistent reads); at 0 it does not ask (0).',
      'Both apiservers count their own: the VIP sends these requests and /metrics to the same one.',
    ],
    cites: [
      APISERVER(
        'pkg/storage/cacher/delegator.go',
        146,
        'return c.storage.Get(ctx, key, opts, objPtr)',
        'a GET with no resourceVersion goes to etcd',
      ),
      APISERVER(
        'pkg/storage/etcd3/store.go',
        245,
        'metrics.RecordEtcdRequest("get", s.groupResource, err, startTime)',
        'counted in etcd_requests_total{operation="get"}',
      ),
      APISERVER(
        'pkg/storage/cacher/watch_cache.go',
        518,
        'listRV, err = c.getCurrentRV(ctx)',
        'a consistent list asks etcd for its revision, then waits for the cache to reach it',
      ),
    ],
    async check(env) {
      const rec = await recorded(env, 'reads-etcd');
      if (!rec) return ['configmap reads-etcd is not in api-lab'];
      const q = Number(rec['quorum-gets']);
      const z = Number(rec['rv0-gets']);
      const events = await env.audit('"name":"reads-target"');
      const gets = (rv: boolean) =>
        events.filter(
          (e) =>
            e.verb === 'get' &&
            e.responseStatus?.code === 200 &&
            new URL(e.requestURI, 'https://x').searchParams.get('resourceVersion') ===
              (rv ? '0' : null),
        ).length;
      return [
        ...expectThat(
          gets(false) >= 5,
          `the audit log shows ${gets(false)} GETs of reads-target with no resourceVersion, not 5`,
        ),
        ...expectThat(
          gets(true) >= 5,
          `the audit log shows ${gets(true)} GETs of reads-target at resourceVersion=0, not 5`,
        ),
        ...expectThat(
          q >= 5 && z < q,
          `reads-etcd records ${rec['quorum-gets']} etcd gets for the quorum reads and ${rec['rv0-gets']} for resourceVersion=0: not 5 or more against fewer`,
        ),
      ];
    },
  },
  {
    id: '3.5e',
    section: SECTION,
    title: 'the FlowSchema that classified my own request',
    task: [
      'As a user who is not an admin (--as=nobody: the admin is system:masters, always exempt), send',
      'one request, read the X-Kubernetes-PF-FlowSchema-UID response header, and find that FlowSchema.',
      'Record its uid and name in a ConfigMap my-flowschema.',
    ],
    commands: [
      `kubectl --as=nobody get --raw ${CMS} -v=8 2>&1 | grep -E 'status=|X-Kubernetes-Pf-'`,
      `FS=$(kubectl --as=nobody get --raw ${CMS} -v=8 2>&1 | sed -n 's/.*X-Kubernetes-Pf-Flowschema-Uid: \\([0-9a-f-]*\\).*/\\1/p' | head -n 1); echo "flowschema uid $FS"`,
      `NAME=$(kubectl get flowschemas -o jsonpath="{.items[?(@.metadata.uid=='$FS')].metadata.name}"); kubectl get flowschema $NAME -o jsonpath='{.metadata.name} precedence={.spec.matchingPrecedence} level={.spec.priorityLevelConfiguration.name}{"\\n"}'`,
      'kubectl create configmap my-flowschema -n api-lab --from-literal=uid=$FS --from-literal=name=$NAME',
    ],
    reset: ['kubectl delete configmap my-flowschema -n api-lab --ignore-not-found'],
    watch: [
      'The request is refused (403), and it still carries the header: priority and fairness',
      'classifies a request before authorization. nobody (group system:authenticated) falls through',
      'to global-default; a service account would land in service-accounts.',
    ],
    cites: [
      APISERVER(
        'pkg/server/filters/priority-and-fairness.go',
        374,
        'w.Header().Set(flowcontrol.ResponseHeaderMatchedFlowSchemaUID, string(classification.FlowSchemaUID))',
        'the header names the FlowSchema that matched',
      ),
    ],
    async check(env) {
      const rec = await recorded(env, 'my-flowschema');
      if (!rec?.uid) return ['configmap my-flowschema with a uid is not in api-lab'];
      const fs = await getObj(
        env,
        `/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/${rec.name ?? ''}`,
      );
      const asNobody = ((await env.audit('"nobody"')) as AuditDetail[]).some(
        (e) =>
          e.impersonatedUser?.username === 'nobody' && e.verb === 'list' && e.requestURI === CMS,
      );
      return [
        ...expectThat(
          fs?.metadata.uid === rec.uid,
          `my-flowschema records ${rec.name} with uid ${rec.uid}; no FlowSchema has both`,
        ),
        ...expectThat(
          rec.name !== 'exempt',
          "the recorded FlowSchema is exempt: the request was an admin's",
        ),
        ...expectThat(asNobody, `the audit log shows no list of ${CMS} as nobody`),
      ];
    },
  },
];
