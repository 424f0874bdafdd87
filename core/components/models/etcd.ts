import {
  credentialsDir,
  flag,
  PKI,
  BIN,
  type Directive,
  type ModelContext,
  type UnitModel,
} from './types.ts';
import { ETCD_CLIENT_PORT, ETCD_PEER_PORT } from '../../../lib/constants.ts';
import type { Inventory } from '../../inventory/load.ts';

export const ETCD_DATA_DIR = '/var/lib/etcd';
/** etcd runs as this system user, not root (CIS 1.1.12: its data dir owned by etcd:etcd). */
export const ETCD_USER = 'etcd';
const CRED = credentialsDir('etcd');

/**
 * etcd's cert/key pairs reach it through systemd credentials: systemd, as root, copies them at each
 * start into /run/credentials/etcd.service/, readable by the etcd user alone. The files under
 * /etc/kubernetes/pki stay root:root and keys 0600 (CIS 1.1.19, 1.1.21); chowning the keys to etcd
 * there would fail 1.1.19. A change to any of them restarts etcd, which loads the new pair.
 */
function credential(id: string, file: string, why: string): Directive {
  return { key: 'LoadCredential', value: `${id}:${PKI}/etcd/${file}`, why };
}

export function peerUrl(address: string): string {
  return `https://${address}:${ETCD_PEER_PORT}`;
}

/** --initial-cluster: every member from the inventory. The unit and `etcd snapshot restore` both use it. */
export function initialCluster(inv: Inventory): string {
  return inv.etcdHosts.map((h) => `${h.name}=${peerUrl(h.address)}`).join(',');
}

/** --initial-cluster-token: stops members of another cluster from joining by mistake. */
export function initialClusterToken(inv: Inventory): string {
  return `hardwire-${inv.cluster.name}`;
}

export function etcdModel({ inv, host }: ModelContext): UnitModel {
  return {
    component: 'etcd',
    description: 'etcd key-value store (hardwire)',
    documentation: 'https://etcd.io/docs/v3.6/op-guide/configuration/',
    type: 'notify',
    binary: `${BIN}/etcd`,
    account: {
      user: ETCD_USER,
      owns: [{ path: ETCD_DATA_DIR, mode: 0o700 }],
      why: 'etcd runs as its own system user, not root, and owns only its data dir (CIS 1.1.11, 1.1.12)',
    },
    directives: [
      credential(
        'server.crt',
        'server.crt',
        'serving cert, loaded with its key at start: etcd re-reads the pair on every TLS handshake, so both come from one snapshot',
      ),
      credential(
        'server.key',
        'server.key',
        'serving key: root-only on disk, readable here by the etcd user alone',
      ),
      credential('peer.crt', 'peer.crt', 'peer cert, loaded with its key at start'),
      credential(
        'peer.key',
        'peer.key',
        'peer key: root-only on disk, readable here by the etcd user alone',
      ),
    ],
    flags: [
      flag('name', host.name, "member name; must match this host's entry in --initial-cluster"),
      flag('data-dir', ETCD_DATA_DIR, 'where the member keeps its WAL and snapshots'),
      flag(
        'listen-client-urls',
        `https://127.0.0.1:${ETCD_CLIENT_PORT},https://${host.address}:${ETCD_CLIENT_PORT}`,
        'clients (apiservers, etcdctl) connect here, TLS only',
      ),
      flag(
        'advertise-client-urls',
        `https://${host.address}:${ETCD_CLIENT_PORT}`,
        'the client URL this member tells the cluster about',
      ),
      flag('listen-peer-urls', peerUrl(host.address), 'member-to-member traffic, TLS only'),
      flag(
        'initial-advertise-peer-urls',
        peerUrl(host.address),
        'the peer URL other members use to reach this one',
      ),
      flag(
        'initial-cluster',
        initialCluster(inv),
        'every member from the inventory; used only when the data dir is empty',
      ),
      flag(
        'initial-cluster-state',
        'new',
        'bootstrap a new cluster (ignored once the data dir exists)',
      ),
      flag(
        'initial-cluster-token',
        initialClusterToken(inv),
        'stops members of another cluster from joining this one by mistake',
      ),
      flag(
        'client-cert-auth',
        true,
        'clients must present a cert signed by --trusted-ca-file (KTHW ran etcd without TLS)',
      ),
      flag(
        'trusted-ca-file',
        `${PKI}/etcd/ca.crt`,
        'the etcd CA: only certs it signed may be clients',
      ),
      flag(
        'cert-file',
        `${CRED}/server.crt`,
        'serving cert for the client port (/etc/kubernetes/pki/etcd/server.crt, through LoadCredential=)',
      ),
      flag(
        'key-file',
        `${CRED}/server.key`,
        'key of the serving cert (through LoadCredential=: the etcd user cannot read the root-only file)',
      ),
      flag(
        'peer-client-cert-auth',
        true,
        'peers must present a cert signed by --peer-trusted-ca-file',
      ),
      flag('peer-trusted-ca-file', `${PKI}/etcd/ca.crt`, 'the etcd CA, for peer certs'),
      flag(
        'peer-cert-file',
        `${CRED}/peer.crt`,
        "this member's peer cert (/etc/kubernetes/pki/etcd/peer.crt, through LoadCredential=)",
      ),
      flag(
        'peer-key-file',
        `${CRED}/peer.key`,
        'key of the peer cert (through LoadCredential=: the etcd user cannot read the root-only file)',
      ),
      flag(
        'listen-metrics-urls',
        'http://127.0.0.1:2381',
        'plain-HTTP /metrics and /health on loopback only, as kubeadm does',
      ),
      flag('snapshot-count', 10000, "raft entries between snapshots; kubeadm's value"),
    ],
  };
}
