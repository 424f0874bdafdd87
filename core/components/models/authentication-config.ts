// The AuthenticationConfiguration hardwire renders for kube-apiserver (--authentication-config): only
// its anonymous block, which limits anonymous requests to the health endpoints. Without it every path
// is open to system:anonymous and RBAC alone decides (system:public-info-viewer lets anyone read
// /version, for one). Load balancers and probes keep /livez, /readyz and /healthz.
import { K } from './types.ts';

export const AUTHN_CONFIG_PATH = `${K}/authentication-config.yaml`;
export const ANONYMOUS_PATHS = ['/livez', '/readyz', '/healthz'] as const;

export const AUTHN_CONFIG = `# Rendered by hardwire (components/models/authentication-config.ts).
apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
# Anonymous requests only to these paths; any other anonymous request is 401. The list becomes the
# anonymous authenticator's allowed paths (K pkg/kubeapiserver/authenticator/config.go:245), matched
# exactly against the request's path (k8s.io/apiserver@v0.36.3/pkg/authentication/request/anonymous/anonymous.go:37).
anonymous:
  enabled: true
  conditions:
${ANONYMOUS_PATHS.map((p) => `    - path: ${p}`).join('\n')}
`;

export const AUTHN_CONFIG_WHY =
  "anonymous requests only to /livez, /readyz and /healthz (the file's anonymous conditions, K pkg/kubeapiserver/options/authentication.go:597); any other anonymous request is 401 instead of left to RBAC";
