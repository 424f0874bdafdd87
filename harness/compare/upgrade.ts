// compare --upgrade-to: puts the section together once every plane is collected. kubeadm's real plan
// ran on its host during the kubeadm collection (planes/kubeadm-upgrade.ts); hardwire's plans run here.
import type { Inventory } from '../../core/inventory/load.ts';
import type { Logger } from '../../lib/log.ts';
import { hardwirePlan, planOfCommands } from './upgrade-hardwire.ts';
import { buildUpgradeSection, type UpgradeSection } from './upgrade-section.ts';
import { COMPONENTS, type ClusterParams, type Component, type PlaneData } from '../planes/types.ts';

const why = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The inventory's cluster.extraArgs for the compared components (kubeadm gets them too). */
export function compareExtraArgs(inv: Inventory): Pick<ClusterParams, 'extraArgs'> {
  const picked = Object.entries(inv.cluster.extraArgs).filter(
    ([c, a]) => (COMPONENTS as readonly string[]).includes(c) && Object.keys(a).length,
  );
  return picked.length
    ? {
        extraArgs: Object.fromEntries(picked) as Partial<Record<Component, Record<string, string>>>,
      }
    : {};
}

export async function upgradeSection(
  inv: Inventory,
  stateDir: string,
  to: string,
  live: boolean,
  kubeadm: PlaneData,
  log: Logger,
): Promise<UpgradeSection> {
  log.step(`upgrade to ${to}: hardwire's plan beside kubeadm's`);
  const from = inv.cluster.kubernetesVersion;
  let hardwire: UpgradeSection['hardwire'];
  try {
    hardwire = await hardwirePlan(inv, stateDir, to, live, log);
  } catch (err) {
    hardwire = { none: `hardwire upgrade plan failed: ${why(err)}` };
  }
  let kubeadmFlags: UpgradeSection['kubeadmFlags'] = {
    none: `the kubeadm plane was not collected: ${kubeadm.why}`,
  };
  if (kubeadm.collected) {
    try {
      kubeadmFlags = planOfCommands(kubeadm.commands, from, to, kubeadm.node);
    } catch (err) {
      kubeadmFlags = { none: `no plan of kubeadm's manifests: ${why(err)}` };
    }
  }
  const k = kubeadm.upgradePlan ?? {
    none: kubeadm.collected
      ? 'kubeadm upgrade plan did not run'
      : `the kubeadm plane was not collected: ${kubeadm.why}`,
  };
  return buildUpgradeSection({ from, to, kubeadm: k, hardwire, kubeadmFlags });
}
