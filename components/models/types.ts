// A component model: the flags a unit passes, each with the reason it is set.
import type { Inventory, Host } from '../../inventory/load.ts';
import type { ComponentName } from '../registry/index.ts';

export type { ComponentName };

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

/** Where files live on a host: kubeadm's layout (lib/constants.ts). */
export { K8S_DIR as K, PKI_DIR as PKI, BIN_DIR as BIN } from '../../lib/constants.ts';

export function flag(name: string, value: string | number | boolean, why: string): Flag {
  return { name, value: String(value), why };
}
