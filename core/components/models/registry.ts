// The CNCF distribution registry (github.com/distribution/distribution/v3, built here), the lab's
// mirror of docker.io (issue 44). It is not Kubernetes, so it has no flag map: each field of the
// config it is given cites where distribution reads it (D = the module at v3.0.0 in the Go module
// cache), and test/registry-citations.test.ts re-opens each one.
import {
  credentialsDir,
  BIN,
  PKI,
  type Directive,
  type ModelContext,
  type UnitModel,
} from './types.ts';
import { REGISTRY_IMAGE_DIR, servedImages } from '../images.ts';
import type { AddonName } from '../../inventory/schema.ts';

export const REGISTRY_MODULE = 'github.com/distribution/distribution/v3@v3.0.0';
export const REGISTRY_PORT = 5000;
export const REGISTRY_CONFIG = '/etc/distribution/config.yml';
export const REGISTRY_DATA_DIR = '/var/lib/registry';
export const REGISTRY_USER = 'registry';
/** Its serving pair, without .crt/.key (the certificate table places it). */
export const REGISTRY_CERT = `${PKI}/registry`;
/** The cluster CA the registry's certificate is verified with: by containerd (hosts.toml), the push and the gate. */
export const REGISTRY_CA = `${PKI}/ca.crt`;
const CRED = credentialsDir('registry');

const read = (file: string, line: number) => `${REGISTRY_MODULE}/${file}:${line}`;

/** One field of the registry's config.yml: its dotted path, its value, why, and where distribution reads it. */
export interface RegistryField {
  path: string;
  value: string;
  why: string;
  readAt: string;
}

export const REGISTRY_FIELDS: readonly RegistryField[] = [
  {
    path: 'version',
    value: '0.1',
    why: 'the one configuration version the parser knows',
    readAt: read('configuration/configuration.go', 798),
  },
  {
    path: 'log.level',
    value: 'info',
    why: 'one line per request (the pulls the tests read in its journal), no debug',
    readAt: read('registry/registry.go', 390),
  },
  {
    path: 'log.formatter',
    value: 'text',
    why: "logrus's key=value lines, as the journal shows the other units'",
    readAt: read('registry/registry.go', 393),
  },
  {
    path: 'storage.filesystem.rootdirectory',
    value: REGISTRY_DATA_DIR,
    why: "blobs and manifests on the host's disk, owned by the registry user; the storage kept across restarts",
    readAt: read('registry/storage/driver/filesystem/driver.go', 83),
  },
  {
    path: 'http.addr',
    value: `:${REGISTRY_PORT}`,
    why: "every address of the host: the workers pull at the host's address, its own push comes from 127.0.0.1",
    readAt: read('registry/registry.go', 235),
  },
  {
    path: 'http.tls.certificate',
    value: `${CRED}/registry.crt`,
    why: `its serving cert from the cluster CA (${REGISTRY_CERT}.crt, through LoadCredential=); set, it serves HTTPS only`,
    readAt: read('registry/registry.go', 285),
  },
  {
    path: 'http.tls.key',
    value: `${CRED}/registry.key`,
    why: `its key (${REGISTRY_CERT}.key, root-only, through LoadCredential=: the registry user cannot read the file itself)`,
    readAt: read('registry/registry.go', 285),
  },
  {
    path: 'http.tls.minimumtls',
    value: 'tls1.2',
    why: "distribution's own default, written out: containerd and the push speak TLS 1.3 anyway",
    readAt: read('registry/registry.go', 244),
  },
];

/** YAML for the fields, nested by their dotted paths, each preceded by its reason and citation. */
export function registryConfig(fields: readonly RegistryField[] = REGISTRY_FIELDS): string {
  const lines = [
    '# Rendered by hardwire (components/models/registry.ts): the CNCF distribution registry, the',
    `# lab's mirror of docker.io. D = ${REGISTRY_MODULE}. Unset fields keep D's defaults: no`,
    '# auth (the lab network only reaches it), no delete, a random http.secret at each start',
    '# (D registry/handlers/app.go:632-638: one instance, so no load balancer to share it with).',
  ];
  const open: string[] = [];
  for (const f of fields) {
    const parts = f.path.split('.');
    let depth = 0;
    while (depth < open.length && depth < parts.length - 1 && open[depth] === parts[depth]) depth++;
    open.length = depth;
    for (; depth < parts.length - 1; depth++) {
      lines.push(`${'  '.repeat(depth)}${parts[depth]}:`);
      open.push(parts[depth]!);
    }
    const pad = '  '.repeat(depth);
    lines.push(`${pad}# ${f.why}`, `${pad}#   read at ${f.readAt}`);
    lines.push(
      `${pad}${parts[depth]}: ${/^[\w./:-]+$/.test(f.value) && !f.value.startsWith(':') ? f.value : JSON.stringify(f.value)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The push of each image it serves (the addons' too), once it answers (imagebuild -push waits for GET /v2/). */
function pushes(addons: readonly AddonName[]): Directive[] {
  return Object.entries(servedImages(addons)).map(([n, i]) => ({
    key: 'ExecStartPost',
    value: `+${BIN}/imagebuild -push ${REGISTRY_IMAGE_DIR}/${n}.tar -registry 127.0.0.1:${REGISTRY_PORT} -ca ${REGISTRY_CA} ${i.as.map((a) => `-as ${a}`).join(' ')}`,
    why: `push the locally built ${n} image into it as ${i.upstream}'s ${i.as.join(', ')}; a changed tarball restarts it, so this runs again. Idempotent: a blob it holds is not sent again. "+": as root, like wire's files under /var/lib/hardwire`,
  }));
}

export function registryModel(ctx: ModelContext): UnitModel {
  return {
    component: 'registry',
    description: 'CNCF distribution registry: the lab mirror of docker.io (hardwire)',
    documentation: 'https://distribution.github.io/distribution/',
    // It does not call sd_notify; its ExecStartPost waits for /v2/ instead.
    type: 'simple',
    binary: `${BIN}/registry`,
    args: [
      {
        word: 'serve',
        why: 'the daemon (D registry/registry.go:104, ServeCmd)',
      },
      {
        word: REGISTRY_CONFIG,
        why: 'its config file, the first argument (D registry/registry.go:476-477)',
      },
    ],
    flags: [],
    account: {
      user: REGISTRY_USER,
      owns: [{ path: REGISTRY_DATA_DIR, mode: 0o700 }],
      why: 'the registry runs as its own system user, not root, and owns only its storage',
    },
    directives: [
      {
        key: 'LoadCredential',
        value: `registry.crt:${REGISTRY_CERT}.crt`,
        why: 'its serving cert, copied by systemd at each start where only the registry user reads it',
      },
      {
        key: 'LoadCredential',
        value: `registry.key:${REGISTRY_CERT}.key`,
        why: 'its key: the file under /etc/kubernetes/pki stays root:root 0600',
      },
      ...pushes(ctx.inv.addons),
    ],
    files: [
      {
        path: REGISTRY_CONFIG,
        content: registryConfig(),
        mode: 0o644,
        why: "the registry's config: storage, address, TLS; each field cited where distribution reads it",
      },
    ],
  };
}
