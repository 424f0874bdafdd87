// The hardwire plane's node, for compare's node rows: a worker host's kubelet and kube-proxy units,
// from the rendered tree (ExecStart and the file --config names) and, live, from /proc. Each flag
// and config field carries the reason hardwire's model gives for it.
import { leafKeys } from '../../core/components/models/config-file.ts';
import { unitPath, type HostTree } from '../../core/render/host-tree.ts';
import type { Session } from '../../core/transport/index.ts';
import { execStartArgv, flagsOf } from './normalize.ts';
import { NODE_COMPONENTS, type NodeComponent, type PlaneNode } from './node-types.ts';
import { readNodeProcess } from './node-read.ts';

const isNode = (c: string): c is NodeComponent =>
  (NODE_COMPONENTS as readonly string[]).includes(c);

/** The node as rendered; undefined when the host is not a worker. */
export function renderedNode(tree: HostTree): PlaneNode | undefined {
  const models = tree.models.filter((m) => isNode(m.component));
  if (models.length === 0) return undefined;
  const node: PlaneNode = { host: tree.host.name, components: {}, reasons: {} };
  for (const m of models) {
    const c = m.component as NodeComponent;
    const unit = tree.files.find((f) => f.path === unitPath(c));
    if (!unit) continue;
    const argv = execStartArgv(unit.content.toString('utf8'));
    const configPath = flagsOf(argv).get('config');
    const file = configPath ? tree.files.find((f) => f.path === configPath) : undefined;
    node.components[c] = {
      argv,
      argvSource: `rendered ${unitPath(c)} (ExecStart)`,
      ...(file
        ? {
            configPath,
            config: file.content.toString('utf8'),
            configSource: `rendered ${configPath}`,
          }
        : {}),
    };
    const url = `components/models/${c}.ts`;
    node.reasons[c] = Object.fromEntries([
      ...m.flags.map((f) => [`--${f.name}`, { text: f.why, url }] as const),
      ...(m.files ?? []).flatMap((f) =>
        (f.fields ?? []).flatMap((x) =>
          leafKeys(x.key, x.value).map((k) => [k, { text: x.why, url }] as const),
        ),
      ),
    ]);
  }
  return node;
}

/** Replaces each rendered component with what runs: pid's argv and --config file, read on the host. */
export async function readLiveNode(
  node: PlaneNode,
  s: Session,
  pids: Partial<Record<NodeComponent, number>>,
): Promise<NodeComponent[]> {
  const read: NodeComponent[] = [];
  for (const c of NODE_COMPONENTS) {
    const pid = pids[c];
    if (!pid || !node.components[c]) continue;
    node.components[c] = await readNodeProcess(s, pid, node.host);
    read.push(c);
  }
  return read;
}
