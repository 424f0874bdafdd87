// Bridges the flag map (flags/) to unit comments. Without map data for a version, units carry
// only the model's reason.
import type { Citer } from './systemd.ts';

export async function citer(kubernetesVersion: string): Promise<Citer | undefined> {
  void kubernetesVersion;
  return undefined;
}
