// A component model: the flags a unit passes, each with the reason it is set.
import type { Inventory, Host } from '../../inventory/load.ts';

export type ComponentName = 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler';

export interface Flag {
  name: string;
  value: string;
  why: string;
}

export interface UnitModel {
  component: ComponentName;
  description: string;
  documentation: string;
  /** systemd Type=: notify where the binary calls sd_notify. */
  type: 'notify' | 'simple';
  binary: string;
  flags: Flag[];
}

export interface ModelContext {
  inv: Inventory;
  host: Host;
}

/** Where files live on a host: kubeadm's layout. */
export const K = '/etc/kubernetes';
export const PKI = `${K}/pki`;
export const BIN = '/usr/local/bin';

export function flag(name: string, value: string | number | boolean, why: string): Flag {
  return { name, value: String(value), why };
}
