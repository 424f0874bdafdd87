// Where `trace apply` stops the debug kube-apiserver: a few sinks on the write path of a create.
// The stages themselves are not listed anywhere: they are the frames of the goroutine stacks
// delve returns at these sinks (stages.ts). Each sink is chosen so that its stack holds a part
// of the path that has returned by the time the next sink is hit:
//   - mutating admission runs in the request's finisher goroutine and returns before the
//     object reaches the registry, so the Txn's stack never shows it: stop in the mutating
//     webhook plugin, which the admission chain calls for every create;
//   - schema validation (the kind's strategy Validate, called by rest.BeforeCreate from the
//     registry's Store.Create) has returned before validating admission runs;
//   - validating admission (the validating webhook plugin, called from Store.Create through the
//     createValidation func) has returned before storage is written;
//   - etcd3's store.Create: its `key` argument tells this request's hits from the apiserver's own
//     writes (its controllers write through the same code);
//   - the etcd client's gRPC KV Txn: the write itself, the deepest frame.
//   - responsewriters.Forbidden: where a request authorization denies is answered 403 (only hit
//     then; its caller is the rejection point, `trace apply --authz-user`).
// The handler-chain filters above them (request info, authentication, authorization, ...) are
// on the stacks of the goroutines that started the finisher's (GODEBUG=tracebackancestors).
import type { DlvClient } from '../delve/rpc.ts';

export type SinkId =
  | 'mutating-admission'
  | 'schema-validation'
  | 'validating-admission'
  | 'storage-create'
  | 'etcd-txn'
  | 'forbidden'
  | 'webhook-call'
  | 'webhook-answer'
  | 'webhook-rejection'; // --webhook-reject (webhook.ts)

/** `key`: an expression delve reads at the stop, to tell this request's hits from others. */
export interface Sink {
  id: SinkId;
  function: string;
  key?: string;
}

export const STORAGE_CREATE = 'k8s.io/apiserver/pkg/storage/etcd3.(*store).Create';
export const ETCD_TXN = 'go.etcd.io/etcd/api/v3/etcdserverpb.(*kVClient).Txn';
export const CHAIN_ADMIT = 'k8s.io/apiserver/pkg/admission.chainAdmissionHandler.Admit';
export const FORBIDDEN = 'k8s.io/apiserver/pkg/endpoints/handlers/responsewriters.Forbidden';
export const CHAIN_VALIDATE = 'k8s.io/apiserver/pkg/admission.chainAdmissionHandler.Validate';
/** What validates when no strategy Validate of the kind is found: it calls the strategy's Validate. */
const BEFORE_CREATE = 'k8s.io/apiserver/pkg/registry/rest.BeforeCreate';

const quote = (s: string) => s.replace(/[.*+?()[\]{}|^$\\]/g, '\\$&');

/**
 * The strategy Validate of a built-in kind, e.g. k8s.io/kubernetes/pkg/registry/core/configmap.strategy.Validate:
 * by its package (pkg/registry/<group>/<kind in lower case>), as the linker kept it in the binary.
 */
export async function validationFunction(c: DlvClient, kind: string): Promise<string> {
  const pkg = `k8s.io/kubernetes/pkg/registry/[a-z]+/${quote(kind.toLowerCase())}`;
  const found = await c.functions(`^${pkg}\\.(\\(\\*)?\\w*[sS]trategy\\)?\\.Validate$`);
  // A value receiver's method also gets a pointer wrapper, (*strategy).Validate: the method is the other one.
  const methods = found.length > 1 ? found.filter((f) => !f.includes('(*')) : found;
  return methods.length === 1 ? methods[0]! : BEFORE_CREATE;
}

export async function sinksFor(c: DlvClient, kind: string): Promise<Sink[]> {
  return [
    {
      id: 'mutating-admission',
      function: 'k8s.io/apiserver/pkg/admission/plugin/webhook/mutating.(*Plugin).Admit',
    },
    { id: 'schema-validation', function: await validationFunction(c, kind) },
    {
      id: 'validating-admission',
      function: 'k8s.io/apiserver/pkg/admission/plugin/webhook/validating.(*Plugin).Validate',
    },
    { id: 'storage-create', function: STORAGE_CREATE, key: 'key' },
    { id: 'etcd-txn', function: ETCD_TXN },
    { id: 'forbidden', function: FORBIDDEN },
  ];
}
