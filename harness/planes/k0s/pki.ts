// k0s's PKI and kubeconfigs under /var/lib/k0s/pki. A file's role comes from the flag that names it
// on a live command line (the file --tls-cert-file names is the apiserver serving cert), so k0s's
// paths normalise to kubeadm's names and the cert matrix lines up. Private keys are never read.
import type { Session } from '../../../core/transport/index.ts';
import { certFacts } from '../x509.ts';
import { flagsOf, kubeconfigCert } from '../normalize.ts';
import type { Component, PlaneData } from '../types.ts';
import { K0S_DATA } from './config.ts';
import { step } from './controller.ts';
import { ROLE_FLAGS, kubeadmFile } from '../cert-roles.ts';

export async function collectPki(plane: PlaneData, s: Session): Promise<void> {
  const roleOfPath = new Map<string, string>();
  for (const [c, flagsRole] of Object.entries(ROLE_FLAGS)) {
    const f = flagsOf(plane.commands[c as Component]?.argv ?? []);
    for (const [flag, role] of Object.entries(flagsRole)) {
      const p = f.get(flag);
      if (!p) continue;
      roleOfPath.set(p, role);
      plane.pathTokens.push([p, kubeadmFile(role)]);
      if (p.endsWith('.crt'))
        plane.pathTokens.push([
          p.replace(/\.crt$/, '.key'),
          kubeadmFile(role).replace(/\.crt$/, '.key'),
        ]);
    }
  }
  const files = (
    await step(
      plane,
      s,
      [
        'find',
        `${K0S_DATA}/pki`,
        '-type',
        'f',
        '(',
        '-name',
        '*.crt',
        '-o',
        '-name',
        '*.conf',
        ')',
      ],
      'list k0s PKI',
    )
  )
    .trim()
    .split('\n')
    .filter(Boolean)
    .sort();
  for (const path of files) {
    const text = (await s.readFile(path)).toString('utf8');
    const role =
      roleOfPath.get(path) ??
      `k0s:${path.slice(`${K0S_DATA}/pki/`.length).replace(/\.(crt|conf)$/, '')}`;
    if (path.endsWith('.crt'))
      plane.certs.push({ role, path, kind: 'cert', facts: certFacts(text) });
    else {
      const c = kubeconfigCert(
        text,
        path,
        role.startsWith('k0s:') ? `kubeconfig/${role.slice(4)}` : role,
      );
      if (c) plane.certs.push(c);
    }
  }
}
