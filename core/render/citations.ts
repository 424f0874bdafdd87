// Bridges the flag map (flags/) to unit comments: the source line that best explains each flag.
// Without map data for a version, units carry only the model's reason.
import type { Citer } from './systemd.ts';
import {
  bestCitation,
  configCitation,
  findFlag,
  flagVersions,
  isFlagComponent,
  mappedComponents,
} from '../flags/map.ts';
import type { UnitModel } from '../components/models/index.ts';
import { InputError } from '../../lib/errors.ts';

export async function citer(kubernetesVersion: string): Promise<Citer | undefined> {
  if (!flagVersions().includes(kubernetesVersion)) return undefined;
  // A component without flag map data (containerd) keeps its model's reasons and citations.
  const flag = (component: string, name: string) =>
    isFlagComponent(component) ? bestCitation(component, name, kubernetesVersion)?.text : undefined;
  // A version whose map lacks the node components (the analyzer pins them at fewer versions) cites no config fields.
  const mapped = mappedComponents(kubernetesVersion) as string[];
  return Object.assign(flag, {
    config: (component: string, key: string) =>
      mapped.includes(component) ? configCitation(component, key, kubernetesVersion) : undefined,
  });
}

/** A flag the component does not register would stop it at start: refuse it at render time. */
export function checkFlagsKnown(models: UnitModel[], kubernetesVersion: string): void {
  if (!flagVersions().includes(kubernetesVersion)) return;
  for (const m of models.filter((x) => isFlagComponent(x.component))) {
    for (const f of m.flags) {
      if (!findFlag(m.component, f.name, kubernetesVersion)) {
        throw new InputError(
          `cluster.extraArgs.${m.component}.${f.name}`,
          `${m.component} (Kubernetes ${kubernetesVersion}) registers no flag --${f.name}; see "hardwire flags ${m.component}"`,
        );
      }
    }
  }
}
