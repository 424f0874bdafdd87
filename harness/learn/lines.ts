// Lines more than one exercise types, said once.
import { IMAGES } from '../../core/components/images.ts';

/** kubectl proxy on the port the task list uses, and a wait until it answers. */
export const PROXY = [
  'kubectl proxy --port=8001 &',
  'until curl -s http://127.0.0.1:8001/version >/dev/null; do sleep 0.2; done',
];

/** Tries a line up to 30 times, a second apart: a new policy or webhook configuration reaches admission through an informer. */
export const untilLive = (line: string) => `for i in $(seq 30); do ${line} && break; sleep 1; done`;

const CMS = '/api/v1/namespaces/api-lab/configmaps';

/**
 * Writes to one ConfigMap until a watch from resourceVersion 1 is refused: on a young cluster the
 * watch cache's ring still holds every event since the apiserver started, so RV 1 is not yet "too
 * old". Needs PROXY. The ring doubles instead of dropping while its oldest event is under 75 s old.
 */
export const PAST_THE_WINDOW = [
  'kubectl create configmap churn -n api-lab',
  `for round in $(seq 40); do kubectl get --raw '${CMS}?watch=1&resourceVersion=1&timeoutSeconds=1' | grep -q 'too old resource version' && break; for i in $(seq 50); do curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' http://127.0.0.1:8001${CMS}/churn -d "{\\"data\\":{\\"i\\":\\"$round-$i\\"}}" >/dev/null; done; done; echo "churn patched $(( (round - 1) * 50 )) times"`,
];

/** A key and a CSR for the webhook's serving certificate, signed through the certificates API into FILE.crt. */
export const issue = (file: string, csr: string, san: string) => [
  `openssl req -new -newkey rsa:2048 -nodes -keyout ${file}.key -out ${file}.csr -subj '/O=system:nodes/CN=system:node:webhook' -addext "subjectAltName=${san}" 2>/dev/null && echo "${file}.csr for ${san}"`,
  `kubectl apply -f - <<EOF
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: ${csr}}
spec:
  signerName: kubernetes.io/kubelet-serving
  usages: [digital signature, key encipherment, server auth]
  request: $(base64 -w0 ${file}.csr)
EOF`,
  `kubectl certificate approve ${csr}`,
  `for i in $(seq 30); do kubectl get csr ${csr} -o jsonpath='{.status.certificate}' | base64 -d > ${file}.crt; [ -s ${file}.crt ] && break; sleep 1; done`,
  `openssl x509 -in ${file}.crt -noout -issuer -ext subjectAltName`,
];

/** hardwire's webhook image as Deployment NAME behind Service NAME (443 to 8443), serving with the TLS Secret NAME-tls. */
export const webhookApp = (name: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: 1
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers:
      - name: webhook
        image: ${IMAGES.webhook.ref}
        ports: [{containerPort: 8443}]
        readinessProbe: {tcpSocket: {port: 8443}, periodSeconds: 1}
        volumeMounts: [{name: tls, mountPath: /tls, readOnly: true}]
      volumes: [{name: tls, secret: {secretName: ${name}-tls}}]
---
apiVersion: v1
kind: Service
metadata: {name: ${name}}
spec:
  selector: {app: ${name}}
  ports: [{port: 443, targetPort: 8443}]`;
