// kubeadm's kube-proxy image with the nft kube-proxy's nftables mode execs (knftables, K
// pkg/proxy/nftables/supported.go:48). Upstream's image is Debian-based with nftables installed; here
// nft and every library it loads are copied from the lab's own Debian rootfs (harness/lab/rootfs.ts
// installs the nftables package for hardwire's workers), so the container runs the very nft the lab
// hosts have. Nothing is downloaded: the rootfs is already on this machine once a lab has booted.
import { join } from 'node:path';
import { ensureBaseRootfs } from '../lab/index.ts';
import { run } from '../../lib/proc.ts';
import type { Logger } from '../../lib/log.ts';
import type { ImageSpec } from '../../core/components/images.ts';

export const NFT = '/usr/sbin/nft';

/**
 * Each file nft needs, as `path in the image` => `file on this machine`: nft, then what `ldd` reports
 * inside the rootfs (the loader included), each resolved by `readlink -f` inside the rootfs too, since
 * its usrmerge links are absolute and would point at this machine's own /lib outside a chroot.
 */
export async function nftClosure(log: Logger): Promise<{ inImage: string; local: string }[]> {
  const root = await ensureBaseRootfs(log);
  const script = `set -e; for f in ${NFT} $(ldd ${NFT} | sed -n 's/.*=> \\(\\/[^ ]*\\) .*/\\1/p; s/^\\s*\\(\\/[^ ]*\\) .*/\\1/p'); do echo "$f $(readlink -f "$f")"; done`;
  const r = await run('chroot', [root, 'sh', '-c', script], {
    step: 'nft and its libraries in the lab rootfs',
  });
  const files = r.stdout
    .trim()
    .split('\n')
    .map((l) => l.split(' '))
    .map(([inImage, real]) => ({ inImage: inImage!, local: join(root, real!) }));
  if (!files.some((f) => f.inImage.includes('libnftables')))
    throw new Error(`ldd ${NFT} in ${root} names no libnftables: ${r.stdout.trim()}`);
  return files;
}

/** The kube-proxy image spec with nft added: each file at the path the loader looks for it. */
export function withNft<N extends string>(
  spec: ImageSpec<N>,
  files: { inImage: string; local: string }[],
): ImageSpec<N> {
  return {
    ...spec,
    args: (b, local) => [
      ...spec.args(b, local),
      ...files.flatMap((f) => ['-add', `${f.inImage}=${f.local}`]),
    ],
    local: [...(spec.local ?? []), ...files.map((f) => f.local)],
    why: `${spec.why}: ${files.map((f) => f.inImage).join(', ')} from the lab rootfs`,
  };
}
