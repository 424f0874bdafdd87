// What a worker leaves behind that is not a file wire installed: Pods' containers and their shims
// (containerd's KillMode=process keeps them through a stop), the kubelet's and containerd's mounts,
// the CNI bridge and its address leases, the routes to other nodes' pods, kube-proxy's nftables
// tables, the kubelet's cgroups, and the state under /var/lib/kubelet and /var/lib/containerd.
// Teardown runs this on each worker before it removes the installed files. Idempotent: each step
// does nothing when there is nothing left.
import type { Host } from '../inventory/load.ts';
import { BIN } from '../components/models/types.ts';

export function workerTeardownScript(host: Host, others: Host[]): string {
  const routes = others
    .filter((o) => o.name !== host.name && o.podCidr)
    .map((o) => o.podCidr!.text);
  return `set -u
# The kubelet and kube-proxy first, so nothing restarts a Pod or rewrites a rule meanwhile.
systemctl stop kubelet.service kube-proxy.service 2>/dev/null || true
# Every Pod's containers, through containerd while it still answers.
if systemctl is-active -q containerd.service; then
  for id in $(${BIN}/ctr -n k8s.io tasks ls -q 2>/dev/null); do ${BIN}/ctr -n k8s.io tasks kill -s SIGKILL "$id" 2>/dev/null || true; done
  for id in $(${BIN}/ctr -n k8s.io tasks ls -q 2>/dev/null); do ${BIN}/ctr -n k8s.io tasks delete -f "$id" >/dev/null 2>&1 || true; done
  for id in $(${BIN}/ctr -n k8s.io containers ls -q 2>/dev/null); do ${BIN}/ctr -n k8s.io containers delete "$id" >/dev/null 2>&1 || true; done
fi
systemctl stop containerd.service 2>/dev/null || true
# Shims outlive containerd (KillMode=process); so does a Pod process containerd could not reach.
# By process name (its 15-character comm): -f would match this script's own command line and kill it.
pkill -KILL -x containerd-shim 2>/dev/null || true
for f in $(find /sys/fs/cgroup/pids/kubepods -name cgroup.procs 2>/dev/null); do for p in $(cat "$f"); do kill -9 "$p" 2>/dev/null || true; done; done
# cgroup v2 with the systemd driver (a VM): each Pod's scope sits under kubepods.slice; stopping the
# slice kills what is left in it and removes its scopes and slices.
systemctl stop kubepods.slice 2>/dev/null || true
sleep 1
# Mounts under the kubelet's and containerd's directories (projected volumes, sandbox shm, rootfs), deepest first.
awk '{print $5}' /proc/self/mountinfo | grep -E '^(/var/lib/kubelet/|/var/lib/containerd/|/run/containerd/|/run/netns/)' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
# The Pod network: the bridge, the routes to other nodes' pods, kube-proxy's tables.
ip link del cni0 2>/dev/null || true
${routes.map((r) => `ip route del ${r} 2>/dev/null || true`).join('\n')}
nft delete table ip kube-proxy 2>/dev/null || true
nft delete table ip6 kube-proxy 2>/dev/null || true
# The kubelet's cgroups (cgroupDriver cgroupfs: /kubepods in every v1 hierarchy, or in the v2 tree), deepest first.
for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null; done
# State: containerd's images and snapshots, the kubelet's Pods, the CNI's address leases.
# The directories themselves may be mount points (a lab host binds them), so only their contents go.
find /var/lib/kubelet /var/lib/containerd -mindepth 1 -delete 2>/dev/null || true
rm -rf /var/lib/cni /run/containerd /etc/cni
exit 0
`;
}
