#!/bin/bash
# A cluster wired by hand the way Kelsey Hightower's "Kubernetes The Hard Way" wires it
# (github.com/kelseyhightower/kubernetes-the-hard-way at 52eb26d, docs/04 to docs/09, units/ and
# configs/ as written there), run on one lab host as root: the learner's hand-wired cluster that
# `hardwire audit` is tested against. Nothing of hardwire runs here.
#
# Usage: kthw.sh ADDRESS, from a directory holding downloads/ (the binaries the guide downloads, built
# here from source: the lab has no route to dl.k8s.io or GitHub).
#
# Adapted only where this machine requires it; each adaptation says so with "ADAPTED:".
# ADAPTED: the guide's server and node-0 are one host (this lab host), to keep the suite's budget:
# the control plane, etcd, containerd, the kubelet and kube-proxy all run here, and node-1 is left out.
set -euo pipefail
ADDR=$1
cd "$(dirname "$0")"
# ADAPTED: the guide names the worker node-0 (hostnamectl, docs/03); the kubelet registers under the
# host's own name, so node-0's certificate and kubeconfig carry that name instead.
NODE=$(hostname)

# docs/03: server.kubernetes.local resolves to the server's address.
echo "${ADDR} server.kubernetes.local server" >>/etc/hosts

# docs/04: the CA and every certificate, from ca.conf.
cat >ca.conf <<EOF
[req]
distinguished_name = req_distinguished_name
prompt             = no
x509_extensions    = ca_x509_extensions

[ca_x509_extensions]
basicConstraints = CA:TRUE
keyUsage         = cRLSign, keyCertSign

[req_distinguished_name]
C   = US
ST  = Washington
L   = Seattle
CN  = CA

[admin]
distinguished_name = admin_distinguished_name
prompt             = no
req_extensions     = default_req_extensions

[admin_distinguished_name]
CN = admin
O  = system:masters

[service-accounts]
distinguished_name = service-accounts_distinguished_name
prompt             = no
req_extensions     = default_req_extensions

[service-accounts_distinguished_name]
CN = service-accounts

[${NODE}]
distinguished_name = ${NODE}_distinguished_name
prompt             = no
req_extensions     = ${NODE}_req_extensions

[${NODE}_req_extensions]
basicConstraints     = CA:FALSE
extendedKeyUsage     = clientAuth, serverAuth
keyUsage             = critical, digitalSignature, keyEncipherment
nsCertType           = client
nsComment            = "Node-0 Certificate"
# ADAPTED: the guide's node SANs are DNS:node-0, IP:127.0.0.1; the host's name and address here.
subjectAltName       = DNS:${NODE}, IP:127.0.0.1, IP:${ADDR}
subjectKeyIdentifier = hash

[${NODE}_distinguished_name]
CN = system:node:${NODE}
O  = system:nodes
C  = US
ST = Washington
L  = Seattle

[kube-proxy]
distinguished_name = kube-proxy_distinguished_name
prompt             = no
req_extensions     = kube-proxy_req_extensions

[kube-proxy_req_extensions]
basicConstraints     = CA:FALSE
extendedKeyUsage     = clientAuth, serverAuth
keyUsage             = critical, digitalSignature, keyEncipherment
nsCertType           = client
nsComment            = "Kube Proxy Certificate"
subjectAltName       = DNS:kube-proxy, IP:127.0.0.1
subjectKeyIdentifier = hash

[kube-proxy_distinguished_name]
CN = system:kube-proxy
O  = system:node-proxier
C  = US
ST = Washington
L  = Seattle

[kube-controller-manager]
distinguished_name = kube-controller-manager_distinguished_name
prompt             = no
req_extensions     = kube-controller-manager_req_extensions

[kube-controller-manager_req_extensions]
basicConstraints     = CA:FALSE
extendedKeyUsage     = clientAuth, serverAuth
keyUsage             = critical, digitalSignature, keyEncipherment
nsCertType           = client
nsComment            = "Kube Controller Manager Certificate"
subjectAltName       = DNS:kube-controller-manager, IP:127.0.0.1
subjectKeyIdentifier = hash

[kube-controller-manager_distinguished_name]
CN = system:kube-controller-manager
O  = system:kube-controller-manager
C  = US
ST = Washington
L  = Seattle

[kube-scheduler]
distinguished_name = kube-scheduler_distinguished_name
prompt             = no
req_extensions     = kube-scheduler_req_extensions

[kube-scheduler_req_extensions]
basicConstraints     = CA:FALSE
extendedKeyUsage     = clientAuth, serverAuth
keyUsage             = critical, digitalSignature, keyEncipherment
nsCertType           = client
nsComment            = "Kube Scheduler Certificate"
subjectAltName       = DNS:kube-scheduler, IP:127.0.0.1
subjectKeyIdentifier = hash

[kube-scheduler_distinguished_name]
CN = system:kube-scheduler
O  = system:system:kube-scheduler
C  = US
ST = Washington
L  = Seattle

[kube-api-server]
distinguished_name = kube-api-server_distinguished_name
prompt             = no
req_extensions     = kube-api-server_req_extensions

[kube-api-server_req_extensions]
basicConstraints     = CA:FALSE
extendedKeyUsage     = clientAuth, serverAuth
keyUsage             = critical, digitalSignature, keyEncipherment
nsCertType           = client, server
nsComment            = "Kube API Server Certificate"
subjectAltName       = @kube-api-server_alt_names
subjectKeyIdentifier = hash

[kube-api-server_alt_names]
IP.0  = 127.0.0.1
IP.1  = 10.32.0.1
DNS.0 = kubernetes
DNS.1 = kubernetes.default
DNS.2 = kubernetes.default.svc
DNS.3 = kubernetes.default.svc.cluster
DNS.4 = kubernetes.svc.cluster.local
DNS.5 = server.kubernetes.local
DNS.6 = api-server.kubernetes.local

[kube-api-server_distinguished_name]
CN = kubernetes
C  = US
ST = Washington
L  = Seattle

[default_req_extensions]
basicConstraints     = CA:FALSE
extendedKeyUsage     = clientAuth
keyUsage             = critical, digitalSignature, keyEncipherment
nsCertType           = client
nsComment            = "Admin Client Certificate"
subjectKeyIdentifier = hash
EOF

openssl genrsa -out ca.key 4096
openssl req -x509 -new -sha512 -noenc \
  -key ca.key -days 3653 \
  -config ca.conf \
  -out ca.crt
certs=(
  "admin" "${NODE}"
  "kube-proxy" "kube-scheduler"
  "kube-controller-manager"
  "kube-api-server"
  "service-accounts"
)
for i in ${certs[*]}; do
  openssl genrsa -out "${i}.key" 4096
  openssl req -new -key "${i}.key" -sha256 \
    -config "ca.conf" -section ${i} \
    -out "${i}.csr"
  openssl x509 -req -days 3653 -in "${i}.csr" \
    -copy_extensions copyall \
    -sha256 -CA "ca.crt" \
    -CAkey "ca.key" \
    -CAcreateserial \
    -out "${i}.crt"
done
mkdir -p /var/lib/kubelet/
cp ca.crt /var/lib/kubelet/
cp ${NODE}.crt /var/lib/kubelet/kubelet.crt
cp ${NODE}.key /var/lib/kubelet/kubelet.key

# docs/05: a kubeconfig per client.
kubeconfig() { # name user cert server
  ./downloads/kubectl config set-cluster kubernetes-the-hard-way \
    --certificate-authority=ca.crt --embed-certs=true --server=$4 --kubeconfig=$1.kubeconfig
  ./downloads/kubectl config set-credentials $2 \
    --client-certificate=$3.crt --client-key=$3.key --embed-certs=true --kubeconfig=$1.kubeconfig
  ./downloads/kubectl config set-context default \
    --cluster=kubernetes-the-hard-way --user=$2 --kubeconfig=$1.kubeconfig
  ./downloads/kubectl config use-context default --kubeconfig=$1.kubeconfig
}
kubeconfig ${NODE} system:node:${NODE} ${NODE} https://server.kubernetes.local:6443
kubeconfig kube-proxy system:kube-proxy kube-proxy https://server.kubernetes.local:6443
kubeconfig kube-controller-manager system:kube-controller-manager kube-controller-manager https://server.kubernetes.local:6443
kubeconfig kube-scheduler system:kube-scheduler kube-scheduler https://server.kubernetes.local:6443
kubeconfig admin admin admin https://127.0.0.1:6443
mkdir -p /var/lib/{kube-proxy,kubelet}
cp kube-proxy.kubeconfig /var/lib/kube-proxy/kubeconfig
cp ${NODE}.kubeconfig /var/lib/kubelet/kubeconfig

# docs/06: the encryption config.
ENCRYPTION_KEY=$(head -c 32 /dev/urandom | base64)
cat >encryption-config.yaml <<EOF
kind: EncryptionConfiguration
apiVersion: apiserver.config.k8s.io/v1
resources:
  - resources:
      - secrets
    providers:
      - aescbc:
          keys:
            - name: key1
              secret: ${ENCRYPTION_KEY}
      - identity: {}
EOF

# docs/07: etcd.
cp downloads/etcd downloads/etcdctl /usr/local/bin/
mkdir -p /etc/etcd /var/lib/etcd
chmod 700 /var/lib/etcd
cp ca.crt kube-api-server.key kube-api-server.crt /etc/etcd/
cat >/etc/systemd/system/etcd.service <<'EOF'
[Unit]
Description=etcd
Documentation=https://github.com/etcd-io/etcd

[Service]
Type=notify
ExecStart=/usr/local/bin/etcd \
  --name controller \
  --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --listen-peer-urls http://127.0.0.1:2380 \
  --listen-client-urls http://127.0.0.1:2379 \
  --advertise-client-urls http://127.0.0.1:2379 \
  --initial-cluster-token etcd-cluster-0 \
  --initial-cluster controller=http://127.0.0.1:2380 \
  --initial-cluster-state new \
  --data-dir=/var/lib/etcd
Restart=on-failure
RestartSec=5

[Install]
WantedBy=multi-user.target
EOF
systemctl daemon-reload
systemctl enable etcd
systemctl start etcd
etcdctl member list

# docs/08: the control plane.
mkdir -p /etc/kubernetes/config
cp downloads/kube-apiserver downloads/kube-controller-manager downloads/kube-scheduler downloads/kubectl /usr/local/bin/
mkdir -p /var/lib/kubernetes/
cp ca.crt ca.key kube-api-server.key kube-api-server.crt service-accounts.key service-accounts.crt \
  encryption-config.yaml /var/lib/kubernetes/
# ADAPTED: --advertise-address, which the guide does not pass: the apiserver otherwise takes the
# address of the default route's interface, and a lab host has no default route (its traffic never
# leaves the machine); without one it exits "Unable to find suitable network address". Filled in by
# sed below, as the guide fills in SUBNET.
cat >/etc/systemd/system/kube-apiserver.service <<'EOF'
[Unit]
Description=Kubernetes API Server
Documentation=https://github.com/kubernetes/kubernetes

[Service]
ExecStart=/usr/local/bin/kube-apiserver \
  --advertise-address=ADVERTISE_ADDRESS \
  --allow-privileged=true \
  --audit-log-maxage=30 \
  --audit-log-maxbackup=3 \
  --audit-log-maxsize=100 \
  --audit-log-path=/var/log/audit.log \
  --authorization-mode=Node,RBAC \
  --bind-address=0.0.0.0 \
  --client-ca-file=/var/lib/kubernetes/ca.crt \
  --enable-admission-plugins=NamespaceLifecycle,NodeRestriction,LimitRanger,ServiceAccount,DefaultStorageClass,ResourceQuota \
  --etcd-servers=http://127.0.0.1:2379 \
  --event-ttl=1h \
  --encryption-provider-config=/var/lib/kubernetes/encryption-config.yaml \
  --kubelet-certificate-authority=/var/lib/kubernetes/ca.crt \
  --kubelet-client-certificate=/var/lib/kubernetes/kube-api-server.crt \
  --kubelet-client-key=/var/lib/kubernetes/kube-api-server.key \
  --runtime-config='api/all=true' \
  --service-account-key-file=/var/lib/kubernetes/service-accounts.crt \
  --service-account-signing-key-file=/var/lib/kubernetes/service-accounts.key \
  --service-account-issuer=https://server.kubernetes.local:6443 \
  --service-node-port-range=30000-32767 \
  --tls-cert-file=/var/lib/kubernetes/kube-api-server.crt \
  --tls-private-key-file=/var/lib/kubernetes/kube-api-server.key \
  --v=2
Restart=on-failure
RestartSec=5

[Install]
WantedBy=multi-user.target
EOF
sed -i "s|ADVERTISE_ADDRESS|${ADDR}|" /etc/systemd/system/kube-apiserver.service
cp kube-controller-manager.kubeconfig /var/lib/kubernetes/
cat >/etc/systemd/system/kube-controller-manager.service <<'EOF'
[Unit]
Description=Kubernetes Controller Manager
Documentation=https://github.com/kubernetes/kubernetes

[Service]
ExecStart=/usr/local/bin/kube-controller-manager \
  --bind-address=0.0.0.0 \
  --cluster-cidr=10.200.0.0/16 \
  --cluster-name=kubernetes \
  --cluster-signing-cert-file=/var/lib/kubernetes/ca.crt \
  --cluster-signing-key-file=/var/lib/kubernetes/ca.key \
  --kubeconfig=/var/lib/kubernetes/kube-controller-manager.kubeconfig \
  --root-ca-file=/var/lib/kubernetes/ca.crt \
  --service-account-private-key-file=/var/lib/kubernetes/service-accounts.key \
  --service-cluster-ip-range=10.32.0.0/24 \
  --use-service-account-credentials=true \
  --v=2
Restart=on-failure
RestartSec=5

[Install]
WantedBy=multi-user.target
EOF
cp kube-scheduler.kubeconfig /var/lib/kubernetes/
cat >/etc/kubernetes/config/kube-scheduler.yaml <<'EOF'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: "/var/lib/kubernetes/kube-scheduler.kubeconfig"
leaderElection:
  leaderElect: true
EOF
cat >/etc/systemd/system/kube-scheduler.service <<'EOF'
[Unit]
Description=Kubernetes Scheduler
Documentation=https://github.com/kubernetes/kubernetes

[Service]
ExecStart=/usr/local/bin/kube-scheduler \
  --config=/etc/kubernetes/config/kube-scheduler.yaml \
  --v=2
Restart=on-failure
RestartSec=5

[Install]
WantedBy=multi-user.target
EOF
systemctl daemon-reload
systemctl enable kube-apiserver kube-controller-manager kube-scheduler
systemctl start kube-apiserver kube-controller-manager kube-scheduler
# ADAPTED: the guide runs `kubectl cluster-info` by hand once the apiserver is up; a script waits for it.
for _ in $(seq 1 120); do
  kubectl get --raw /readyz --kubeconfig admin.kubeconfig >/dev/null 2>&1 && break
  sleep 1
done
kubectl cluster-info --kubeconfig admin.kubeconfig
cat >kube-apiserver-to-kubelet.yaml <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  annotations:
    rbac.authorization.kubernetes.io/autoupdate: "true"
  labels:
    kubernetes.io/bootstrapping: rbac-defaults
  name: system:kube-apiserver-to-kubelet
rules:
  - apiGroups:
      - ""
    resources:
      - nodes/proxy
      - nodes/stats
      - nodes/log
      - nodes/spec
      - nodes/metrics
    verbs:
      - "*"
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:kube-apiserver
  namespace: ""
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:kube-apiserver-to-kubelet
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: User
    name: kubernetes
EOF
kubectl apply -f kube-apiserver-to-kubelet.yaml --kubeconfig admin.kubeconfig

# docs/09: the worker.
# ADAPTED: no `apt-get install socat conntrack ipset kmod` (the lab has no route to a mirror, and
# nothing below needs them), and no `swapoff -a` (lab hosts share the machine's swap; the guide's
# kubelet config has failSwapOn: false anyway).
mkdir -p /etc/cni/net.d /opt/cni/bin /var/lib/kubelet /var/lib/kube-proxy /var/lib/kubernetes /var/run/kubernetes
cp downloads/crictl downloads/kube-proxy downloads/kubelet downloads/runc /usr/local/bin/
cp downloads/containerd downloads/containerd-shim-runc-v2 /bin/
cp downloads/bridge downloads/host-local downloads/loopback /opt/cni/bin/
# The node's pod subnet (machines.txt's SUBNET for node-0).
SUBNET=10.200.0.0/24
cat >/etc/cni/net.d/10-bridge.conf <<EOF
{
  "cniVersion": "1.0.0",
  "name": "bridge",
  "type": "bridge",
  "bridge": "cni0",
  "isGateway": true,
  "ipMasq": true,
  "ipam": {
    "type": "host-local",
    "ranges": [
      [{"subnet": "${SUBNET}"}]
    ],
    "routes": [{"dst": "0.0.0.0/0"}]
  }
}
EOF
cat >/etc/cni/net.d/99-loopback.conf <<'EOF'
{
  "cniVersion": "1.1.0",
  "name": "lo",
  "type": "loopback"
}
EOF
# ADAPTED: no `modprobe br-netfilter` nor the bridge-nf-call sysctls: the kernel is the machine's
# (there are no modules in the container) and /proc/sys is read-only in a lab container.
mkdir -p /etc/containerd/
# ADAPTED: SystemdCgroup = false: the machine's cgroups are v1 and the node's systemd does not own
# them (hardwire's docs/workers-spike.md); the guide's true matches its cgroupDriver: systemd.
cat >/etc/containerd/config.toml <<'EOF'
version = 2

[plugins."io.containerd.grpc.v1.cri"]
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    SystemdCgroup = false
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "/opt/cni/bin"
  conf_dir = "/etc/cni/net.d"
EOF
# ADAPTED: no `ExecStartPre=/sbin/modprobe overlay` (no modules in the container; the machine's kernel
# has overlay) and no `OOMScoreAdjust=-999` (the lab's bounding set lacks CAP_SYS_RESOURCE); ordered
# after the lab host's own node preparation (cgroups, /dev/kmsg), as every lab node's containerd is.
cat >/etc/systemd/system/containerd.service <<'EOF'
[Unit]
Description=containerd container runtime
Documentation=https://containerd.io
After=network.target hardwire-node-prepare.service
Requires=hardwire-node-prepare.service

[Service]
ExecStart=/bin/containerd
Restart=always
RestartSec=5
Delegate=yes
KillMode=process
LimitNOFILE=1048576
LimitNPROC=infinity
LimitCORE=infinity

[Install]
WantedBy=multi-user.target
EOF
# ADAPTED: cgroupDriver: cgroupfs (as containerd above) and failCgroupV1: false (the kubelet refuses
# cgroup v1 otherwise, and the machine has only v1 controllers).
cat >/var/lib/kubelet/kubelet-config.yaml <<'EOF'
kind: KubeletConfiguration
apiVersion: kubelet.config.k8s.io/v1beta1
address: "0.0.0.0"
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: "/var/lib/kubelet/ca.crt"
authorization:
  mode: Webhook
cgroupDriver: cgroupfs
failCgroupV1: false
containerRuntimeEndpoint: "unix:///var/run/containerd/containerd.sock"
enableServer: true
failSwapOn: false
maxPods: 16
memorySwap:
  swapBehavior: NoSwap
port: 10250
resolvConf: "/etc/resolv.conf"
registerNode: true
runtimeRequestTimeout: "15m"
tlsCertFile: "/var/lib/kubelet/kubelet.crt"
tlsPrivateKeyFile: "/var/lib/kubelet/kubelet.key"
EOF
cat >/etc/systemd/system/kubelet.service <<'EOF'
[Unit]
Description=Kubernetes Kubelet
Documentation=https://github.com/kubernetes/kubernetes
After=containerd.service
Requires=containerd.service

[Service]
ExecStart=/usr/local/bin/kubelet \
  --config=/var/lib/kubelet/kubelet-config.yaml \
  --kubeconfig=/var/lib/kubelet/kubeconfig \
  --v=2
Restart=on-failure
RestartSec=5

[Install]
WantedBy=multi-user.target
EOF
# ADAPTED: mode "nftables", not "iptables": the lab rootfs has nft and no iptables; and conntrack
# maxPerCore: 0, which leaves the machine's conntrack sysctls alone (/proc/sys is read-only here).
cat >/var/lib/kube-proxy/kube-proxy-config.yaml <<'EOF'
kind: KubeProxyConfiguration
apiVersion: kubeproxy.config.k8s.io/v1alpha1
clientConnection:
  kubeconfig: "/var/lib/kube-proxy/kubeconfig"
mode: "nftables"
conntrack:
  maxPerCore: 0
clusterCIDR: "10.200.0.0/16"
EOF
cat >/etc/systemd/system/kube-proxy.service <<'EOF'
[Unit]
Description=Kubernetes Kube Proxy
Documentation=https://github.com/kubernetes/kubernetes

[Service]
ExecStart=/usr/local/bin/kube-proxy \
  --config=/var/lib/kube-proxy/kube-proxy-config.yaml
Restart=on-failure
RestartSec=5

[Install]
WantedBy=multi-user.target
EOF
systemctl daemon-reload
systemctl enable containerd kubelet kube-proxy
systemctl start containerd kubelet kube-proxy
systemctl is-active kubelet
