// The kubelet's client and serving certificates on a plane's worker (issue 23): which files the running
// kubelet uses (its --kubeconfig's client cert, its config's tlsCertFile or the self-signed default in
// --cert-dir), who signed the serving cert, and whether the plane's apiserver can verify it
// (--kubelet-certificate-authority, from the apiserver's live argv). Certificate blocks only: the
// key in the same file (kubelet-client-current.pem) is cut on the host and never read.
import { X509Certificate } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import type { Session } from '../../core/transport/index.ts';
import { certFacts } from './x509.ts';
import { flagsOf } from './normalize.ts';
import type { KubeletCerts, PlaneData } from './types.ts';

/** The kubelet's --cert-dir default (cmd/kubelet/app/options/options.go). */
const DEFAULT_CERT_DIR = '/var/lib/kubelet/pki';

const pemBlocks = (text: string): string[] =>
  text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];

async function certPems(s: Session, file: string): Promise<string[]> {
  const r = await s.exec([
    'sed',
    '-n',
    '/-----BEGIN CERTIFICATE-----/,/-----END CERTIFICATE-----/p',
    file,
  ]);
  return pemBlocks(r.stdout);
}

const issuedBy = (leaf: X509Certificate, ca: X509Certificate): boolean =>
  leaf.checkIssued(ca) && leaf.verify(ca.publicKey);

export function verdict(c: Pick<KubeletCerts, 'serving' | 'apiserverKubeletCa'>): string {
  const flag = c.apiserverKubeletCa;
  if (c.serving.signedByClusterCa) {
    return flag
      ? `serving cert signed by the cluster CA; the apiserver verifies it against ${flag} (--kubelet-certificate-authority)`
      : 'serving cert signed by the cluster CA, but the apiserver has no --kubelet-certificate-authority, so it does not check it';
  }
  if (c.serving.selfSigned) {
    return flag
      ? `serving cert self-signed by the kubelet (its own ${c.serving.issuer}); the apiserver's --kubelet-certificate-authority=${flag} cannot verify it, so logs, exec and port-forward fail`
      : "serving cert self-signed by the kubelet; the apiserver can talk to it only because --kubelet-certificate-authority is absent, so it verifies no kubelet's serving cert (CIS 1.2.5)";
  }
  return `serving cert signed by neither the cluster CA nor a CA in its own file (issuer ${c.serving.issuer})`;
}

/** Reads the kubelet's certificates on the host `s` is connected to; plane.node must hold the running kubelet. */
export async function readKubeletCerts(
  plane: PlaneData,
  s: Session,
  apiserver: { argv: string[]; source: string },
): Promise<KubeletCerts> {
  const kubelet = plane.node?.components.kubelet;
  if (!plane.node || !kubelet) throw new Error('no kubelet on this plane');
  const flags = flagsOf(kubelet.argv);
  const kubeconfigPath = flags.get('kubeconfig');
  if (!kubeconfigPath) throw new Error('the kubelet has no --kubeconfig');
  type Kc = {
    clusters?: { cluster?: Record<string, string> }[];
    users?: { user?: Record<string, string> }[];
  };
  const kc = parseYaml((await s.readFile(kubeconfigPath)).toString('utf8')) as Kc;
  const user = kc.users?.[0]?.user ?? {};
  const cluster = kc.clusters?.[0]?.cluster ?? {};
  const clientFile = user['client-certificate'];
  const clientPem = clientFile
    ? (await certPems(s, clientFile))[0]
    : Buffer.from(user['client-certificate-data'] ?? '', 'base64').toString('utf8');
  if (!clientPem) throw new Error(`${kubeconfigPath} names no client certificate`);
  const caPem = cluster['certificate-authority-data']
    ? Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8')
    : (await certPems(s, cluster['certificate-authority'] ?? '/etc/kubernetes/pki/ca.crt'))[0]!;
  const config = (kubelet.config ? parseYaml(kubelet.config) : {}) as {
    tlsCertFile?: string;
    serverTLSBootstrap?: boolean;
  };
  // serverTLSBootstrap (k0s's worker profile): the kubelet asks the cluster CA through a CSR and keeps the issued cert here.
  const certDir = flags.get('cert-dir') ?? DEFAULT_CERT_DIR;
  const servingFile =
    config.tlsCertFile ??
    flags.get('tls-cert-file') ??
    (config.serverTLSBootstrap
      ? `${certDir}/kubelet-server-current.pem`
      : `${certDir}/kubelet.crt`);
  const serving = (await certPems(s, servingFile)).map((p) => new X509Certificate(p));
  if (serving.length === 0) throw new Error(`no certificate in ${servingFile}`);
  const leaf = serving[0]!;
  const link = clientFile
    ? (await s.exec(['readlink', clientFile], { allowFail: true })).stdout.trim()
    : '';
  const cf = certFacts(clientPem);
  const sf = certFacts(leaf.toString());
  const partial = {
    host: plane.node.host,
    client: {
      file: clientFile ?? kubeconfigPath,
      embedded: !clientFile,
      ...(link ? { linkTarget: link } : {}),
      subject: cf.subject,
      cn: cf.cn,
      o: cf.o,
      issuer: cf.issuer,
      notBefore: cf.notBefore,
      notAfter: cf.notAfter,
      validityDays: cf.validityDays,
    },
    // Self-signed: issued by itself or by a CA cert in the same file (the kubelet writes its own <host>-ca@<ts> there).
    serving: {
      file: servingFile,
      subject: sf.subject,
      issuer: sf.issuer,
      validityDays: sf.validityDays,
      selfSigned: serving.some((c) => issuedBy(leaf, c)),
      signedByClusterCa: issuedBy(leaf, new X509Certificate(caPem)),
    },
    apiserverKubeletCa: flagsOf(apiserver.argv).get('kubelet-certificate-authority') ?? null,
    apiserverArgvSource: apiserver.source,
  };
  plane.certs.push(
    { role: 'kubelet-client', path: partial.client.file, kind: 'cert', facts: cf },
    { role: 'kubelet-serving', path: servingFile, kind: 'cert', facts: sf },
  );
  return { ...partial, verdict: verdict(partial) };
}
