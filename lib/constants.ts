// Values more than one module needs. One place each, with the reason where the value is a choice.

/** The Kubernetes release hardwire is pinned to: flag map, models, binaries and compare all follow it. */
export const PINNED_KUBERNETES = 'v1.36.3';

/** kube-apiserver's secure port, kubeadm's default (--secure-port, localAPIEndpoint.bindPort). */
export const APISERVER_PORT = 6443;
export const ETCD_CLIENT_PORT = 2379;
export const ETCD_PEER_PORT = 2380;

/** Where hardwire installs binaries on a host, as KTHW and kubeadm's docs do. */
export const BIN_DIR = '/usr/local/bin';
/** kubeadm's layout: kubeconfigs under K8S_DIR, certificates under PKI_DIR. */
export const K8S_DIR = '/etc/kubernetes';
export const PKI_DIR = `${K8S_DIR}/pki`;
export const UNIT_DIR = '/etc/systemd/system';
/** hardwire's own state on a host: manifest, pending restarts, backups, snapshots. */
export const HOST_STATE_DIR = '/var/lib/hardwire';

/**
 * How long one gate waits (etcd healthy, /readyz, a Lease renewing). 120 s covers the slowest step
 * measured on the lab: a cold kube-apiserver start on 5 hosts sharing 2 cores took up to ~60 s
 * before /readyz, and a controller Lease can take one full lease duration (15 s) plus a retry
 * period after a restart. Every command uses this default; --gate-timeout overrides it.
 */
export const DEFAULT_GATE_TIMEOUT_MS = 120_000;
