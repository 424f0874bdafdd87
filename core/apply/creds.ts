// Operator-side credentials from the kubeconfigs hardwire wrote.
import { join } from 'node:path';
import { credsFromKubeconfig, type KubeCreds } from '../transport/kube-api.ts';

export function adminKubeconfigPath(clusterDir: string): string {
  return join(clusterDir, 'kubeconfigs', 'admin.conf');
}

export function adminCreds(clusterDir: string): KubeCreds {
  return credsFromKubeconfig(adminKubeconfigPath(clusterDir));
}

export function superAdminCreds(clusterDir: string): KubeCreds {
  return credsFromKubeconfig(join(clusterDir, 'kubeconfigs', 'super-admin.conf'));
}
