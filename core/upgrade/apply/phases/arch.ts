import type { Phase } from '../../../apply/phase.ts';
import { InputError } from '../../../../lib/errors.ts';
import { localArch } from '../../../../lib/arch.ts';

/**
 * An upgrade builds its targets and etcd's hops for this machine's architecture only (hop-binaries,
 * retarget): a host of another one is refused before anything is built or written.
 */
export const oneArchPhase: Phase = {
  id: 'arch',
  title: "Check that every host has this machine's architecture",
  async run(ctx) {
    const other = ctx.inv.hosts.filter(
      (h) => (ctx.profiles.get(h.name)?.arch ?? localArch()) !== localArch(),
    );
    if (other.length > 0)
      throw new InputError(
        'hosts',
        `${other.map((h) => `${h.name} is ${ctx.profiles.get(h.name)!.arch}`).join(', ')}; upgrade apply builds for ${localArch()} only (wire builds each host's architecture); upgrade from a machine of that architecture`,
      );
  },
};
