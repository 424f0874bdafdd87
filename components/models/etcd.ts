import { flag, PKI, BIN, type ModelContext, type UnitModel } from './types.ts';
import { ETCD_CLIENT_PORT, ETCD_PEER_PORT } from '../../lib/constants.ts';
import type { Inventory } from '../../inventory/load.ts';

export const ETCD_DATA_DIR = '/var/lib/etcd';

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
    flags: [
      flag('name', host.name, 'member name; must match this host\'s entry in --initial-cluster'),
      flag('data-dir', ETCD_DATA_DIR, 'where the member keeps its WAL and snapshots'),
      flag('listen-client-urls', `https://127.0.0.1:${ETCD_CLIENT_PORT},https://${host.address}:${ETCD_CLIENT_PORT}`, 'clients (apiservers, etcdctl) connect here, TLS only'),
      flag('advertise-client-urls', `https://${host.address}:${ETCD_CLIENT_PORT}`, 'the client URL this member tells the cluster about'),
      flag('listen-peer-urls', peerUrl(host.address), 'member-to-member traffic, TLS only'),
      flag('initial-advertise-peer-urls', peerUrl(host.address), 'the peer URL other members use to reach this one'),
      flag('initial-cluster', initialCluster(inv), 'every member from the inventory; used only when the data dir is empty'),
      flag('initial-cluster-state', 'new', 'bootstrap a new cluster (ignored once the data dir exists)'),
      flag('initial-cluster-token', initialClusterToken(inv), 'stops members of another cluster from joining this one by mistake'),
      flag('client-cert-auth', true, 'clients must present a cert signed by --trusted-ca-file (KTHW ran etcd without TLS)'),
      flag('trusted-ca-file', `${PKI}/etcd/ca.crt`, 'the etcd CA: only certs it signed may be clients'),
      flag('cert-file', `${PKI}/etcd/server.crt`, 'serving cert for the client port'),
      flag('key-file', `${PKI}/etcd/server.key`, 'key of the serving cert'),
      flag('peer-client-cert-auth', true, 'peers must present a cert signed by --peer-trusted-ca-file'),
      flag('peer-trusted-ca-file', `${PKI}/etcd/ca.crt`, 'the etcd CA, for peer certs'),
      flag('peer-cert-file', `${PKI}/etcd/peer.crt`, 'this member\'s peer cert'),
      flag('peer-key-file', `${PKI}/etcd/peer.key`, 'key of the peer cert'),
      flag('listen-metrics-urls', 'http://127.0.0.1:2381', 'plain-HTTP /metrics and /health on loopback only, as kubeadm does'),
      flag('snapshot-count', 10000, 'raft entries between snapshots; kubeadm\'s value'),
    ],
  };
}
