// What the test reads of etcd's first boot under `flags prove`, on the host itself and not through
// prove: each file under the data dir (mode, owner, size, sha256sum) at the moment etcd.service
// stops and at the moment it starts again, written by a runtime drop-in the test adds to the unit
// (ExecStopPost=, ExecStartPre=, as root; prove reads the unit's own file, not drop-ins); the member
// and cluster IDs, the revision, a key the test writes and the namespaces' keys, read with etcdctl;
// /readyz; the units' states; and the routes and links.
import type { Session } from '../../core/transport/index.ts';
import { remote } from './lab.ts';

const RUN = '/run/hardwire-test-etcd';
const DROPIN_DIR = '/run/systemd/system/etcd.service.d';
const DROPIN = `${DROPIN_DIR}/hardwire-test-hashes.conf`;
const PKI = '/etc/kubernetes/pki';
const MARKER = '/hardwire-test/first-boot';
export const UNITS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'].map(
  (u) => `${u}.service`,
);

/** Lists the data dir into $RUN/<event>.<ns>: every entry's mode, owner, size and path, then each file's sha256sum. */
const HASH_SCRIPT = `#!/bin/sh
cd /var/lib/etcd || exit 0
out=${RUN}/$1.$(date +%s%N)
{ find . -printf '%M %u:%g %s %p\\n' | LC_ALL=C sort; find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum; } > "$out.tmp" && mv "$out.tmp" "$out"
`;

const etcdctl = (...args: string[]) => [
  '/usr/local/bin/etcdctl',
  '--endpoints=https://127.0.0.1:2379',
  `--cacert=${PKI}/etcd/ca.crt`,
  `--cert=${PKI}/etcd/healthcheck-client.crt`,
  `--key=${PKI}/etcd/healthcheck-client.key`,
  ...args,
];

export interface EtcdView {
  memberId: string;
  clusterId: string;
  revision: number;
  /** The test's key: value, create and mod revision (as etcdctl prints them). */
  marker: string;
  namespaces: string;
  routes: string;
  links: string;
}

async function view(s: Session): Promise<EtcdView> {
  const status = await remote(s, etcdctl('endpoint', 'status', '-w', 'json'));
  const num = (key: string) =>
    new RegExp(`"${key}":(\\d+)`).exec(status)?.[1] ?? `no ${key} in ${status}`;
  const kv = await remote(s, etcdctl('get', MARKER, '-w', 'json'));
  const m =
    /"kvs":\[\{"key":"[^"]*","create_revision":(\d+),"mod_revision":(\d+),"version":\d+,"value":"([^"]*)"/.exec(
      kv,
    );
  return {
    memberId: num('member_id'),
    clusterId: num('cluster_id'),
    revision: Number(num('revision')),
    marker: m
      ? `${Buffer.from(m[3]!, 'base64').toString('utf8')} created ${m[1]} modified ${m[2]}`
      : `missing: ${kv}`,
    namespaces: await remote(
      s,
      etcdctl('get', '/registry/namespaces/', '--prefix', '-w', 'fields'),
    ).then((t) =>
      t
        .split('\n')
        .filter((l) => /^"(Key|CreateRevision)"/.test(l))
        .join('\n'),
    ),
    routes: await remote(s, ['sh', '-c', 'ip -4 route; ip -6 route']),
    links: await remote(s, ['ip', '-br', 'link']),
  };
}

/** Before prove: the drop-in (a daemon-reload, etcd keeps running), the test's key, and what is read now. */
export async function armFirstBoot(s: Session, token: string): Promise<EtcdView> {
  await s.exec(
    [
      'sh',
      '-c',
      `rm -rf ${RUN} && mkdir -p ${RUN} ${DROPIN_DIR} && cat > ${RUN}/hash.sh && chmod 0755 ${RUN}/hash.sh && printf '%s\\n' '[Service]' 'ExecStartPre=+${RUN}/hash.sh start' 'ExecStopPost=+${RUN}/hash.sh stop' > ${DROPIN} && systemctl daemon-reload`,
    ],
    { stdin: HASH_SCRIPT },
  );
  await s.exec(etcdctl('put', MARKER, token));
  return view(s);
}

/** The data dir's listings, in the order etcd.service stopped and started. */
export async function listings(s: Session): Promise<{ event: string; text: string }[]> {
  const names = (
    await remote(s, ['sh', '-c', `ls ${RUN} | grep -E '^(start|stop)\\.[0-9]+$' | sort -t. -k2 -n`])
  )
    .split('\n')
    .filter(Boolean);
  const out: { event: string; text: string }[] = [];
  for (const n of names)
    out.push({ event: n.split('.')[0]!, text: await remote(s, ['cat', `${RUN}/${n}`]) });
  return out;
}

/** After prove: /readyz once the apiserver serves again (it is Type=simple: started, not yet ready), then what is read now. */
export async function afterFirstBoot(
  s: Session,
): Promise<EtcdView & { readyz: string; units: string }> {
  let readyz = '';
  for (let i = 0; i < 60 && readyz !== 'ok'; i++) {
    if (i) await new Promise((r) => setTimeout(r, 1000));
    readyz = await remote(s, [
      'curl',
      '-s',
      '--max-time',
      '3',
      '--cacert',
      `${PKI}/ca.crt`,
      '--cert',
      `${PKI}/apiserver-kubelet-client.crt`,
      '--key',
      `${PKI}/apiserver-kubelet-client.key`,
      'https://127.0.0.1:6443/readyz',
    ]);
  }
  return {
    ...(await view(s)),
    readyz,
    units: await remote(s, ['systemctl', 'is-active', ...UNITS]),
  };
}

/** The drop-in and the listings go; etcd keeps running. */
export async function disarm(s: Session): Promise<void> {
  await s.exec(['sh', '-c', `rm -f ${DROPIN} && systemctl daemon-reload && rm -rf ${RUN}`], {
    allowFail: true,
  });
  await s.exec(etcdctl('del', MARKER), { allowFail: true });
}
