// The audit policy hardwire renders for kube-apiserver (--audit-policy-file). Rules are matched in
// order and the first match decides the level. The policy follows the Kubernetes auditing docs'
// example and GKE's: no bodies for anything that carries secrets, no noise from health checks and
// leader-election renewals, metadata for reads, request bodies for every other write.
import { K } from './types.ts';

export const AUDIT_POLICY_PATH = `${K}/audit-policy.yaml`;
export const AUDIT_LOG_DIR = '/var/log/kubernetes/audit';
export const AUDIT_LOG_PATH = `${AUDIT_LOG_DIR}/audit.log`;

export const AUDIT_POLICY = `# Rendered by hardwire (components/models/audit-policy.ts). The first rule that matches decides.
apiVersion: audit.k8s.io/v1
kind: Policy
# One event per request at ResponseComplete (and ResponseStarted for watches), not a second one on arrival.
omitStages:
  - RequestReceived
rules:
  # Probes and metrics: polled every few seconds by gates and load balancers; no security value.
  - level: None
    nonResourceURLs:
      - /healthz*
      - /livez*
      - /readyz*
      - /metrics
      - /version
  # Leader-election renewals by the controller-manager and scheduler, and the apiservers' own
  # identity Leases: a write every 2 to 10 s per component that says nothing about who did what.
  - level: None
    users:
      - system:kube-controller-manager
      - system:kube-scheduler
      - system:apiserver
    verbs: [get, update]
    resources:
      - group: coordination.k8s.io
        resources: [leases]
  # Events are written by controllers constantly and are themselves a record.
  - level: None
    resources:
      - group: ""
        resources: [events]
      - group: events.k8s.io
        resources: [events]
  # Anything that can carry a secret: who and what only, never the body, so the log holds no
  # Secret data, service-account tokens or token reviews.
  - level: Metadata
    resources:
      - group: ""
        resources: [secrets, configmaps, serviceaccounts/token]
      - group: authentication.k8s.io
        resources: [tokenreviews]
      - group: certificates.k8s.io
        resources: [certificatesigningrequests]
  # Reads: who read what.
  - level: Metadata
    verbs: [get, list, watch]
  # Every other write: who changed what, with the object they sent.
  - level: Request
`;
