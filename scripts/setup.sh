#!/usr/bin/env bash
# Installs what hardwire needs on a fresh Debian 12 machine; quick and silent when all is present.
# Progress goes to stderr. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '==> %s\n' "$*" >&2; }

TOOLCHAIN="${HARDWIRE_CACHE:-$HOME/.cache/hardwire}/toolchain"
# g++, make and python3 build ssh2's native AES-GCM (about 1.6x the throughput of its JavaScript fallback).
# libseccomp-dev and pkg-config: runc is built with cgo against libseccomp (`components build workers`);
# busybox-static: the busybox image of the workers' Pods is built from it.
# qemu-system-x86: lab hosts that are VMs (lab up --vm-workers; test/vm.test.ts).
# qemu-user-static and binfmt-support: lab hosts whose userland is arm64 (lab up --arm64-workers),
# each program run by qemu-aarch64-static through binfmt_misc.
# gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and libseccomp-dev:arm64 (multiarch): every binary
# and image is cross-built for a host's architecture (pause, runc's cgo); qemu-user-static also runs
# each arm64 binary's version probe here.
APT_PACKAGES=(systemd-container debootstrap debian-archive-keyring util-linux openssl iproute2 openssh-client ca-certificates chromium g++ make python3 libseccomp-dev pkg-config busybox-static qemu-system-x86 qemu-user-static binfmt-support gcc-aarch64-linux-gnu libc6-dev-arm64-cross libseccomp-dev:arm64)

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  say "dpkg --add-architecture arm64 (libseccomp-dev:arm64, for arm64 hosts' runc)"
  dpkg --add-architecture arm64
fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "apt-get install ${missing[*]}"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

# Every lab host's systemd takes inotify instances; the default 128 runs out at about 8 hosts
# ("Failed to allocate manager object: Too many open files").
if [ "$(cat /proc/sys/fs/inotify/max_user_instances 2>/dev/null || echo 0)" -lt 1024 ]; then
  say "sysctl fs.inotify.max_user_instances=1024 (lab hosts each run systemd)"
  sysctl -q -w fs.inotify.max_user_instances=1024 >&2 || echo "warning: could not raise fs.inotify.max_user_instances; large labs may fail to boot" >&2
fi

# The kernel's qemu-aarch64 handler, with the F (fix-binary) flag Debian's format sets, so arm64
# programs run inside a container too. The package's install registers it, but nothing does again
# after a reboot on a machine whose PID 1 is not systemd (lab up --arm64-workers also does this).
if [ -d /proc/sys/fs/binfmt_misc ] && [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc >&2 || true
fi
if [ -e /proc/sys/fs/binfmt_misc/register ] && [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  say "update-binfmts --enable qemu-aarch64 (arm64 lab hosts)"
  update-binfmts --enable qemu-aarch64 >&2 || echo "warning: could not register the qemu-aarch64 binfmt_misc handler; lab up --arm64-workers will try again" >&2
fi

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
export PATH="$TOOLCHAIN/node_modules/.bin:/usr/local/go/bin:$PATH"
if [ "$(node_major)" -lt 22 ] || ! command -v pnpm >/dev/null; then
  say "installing node@24 and pnpm@10 from the npm registry into $TOOLCHAIN"
  mkdir -p "$TOOLCHAIN"
  # Use the machine's npm (any node) to fetch node@24; the new node then shadows the old on PATH.
  PATH="${PATH#"$TOOLCHAIN/node_modules/.bin:"}" npm install --prefix "$TOOLCHAIN" --no-fund --no-audit --loglevel=error node@24 pnpm@10 >&2
fi
[ "$(node_major)" -ge 22 ] || { echo "error: node: still $(node --version) after install; check $TOOLCHAIN" >&2; exit 1; }

command -v go >/dev/null || { echo "error: go: not found; hardwire builds etcd and Kubernetes with Go (expected /usr/local/go/bin/go)" >&2; exit 1; }

# ssh2 builds its crypto binding with node-gyp, against this node's headers: the npm package of
# node ships them, so nothing is downloaded (package.json allows that one build script).
for d in "$(dirname "$(dirname "$(node -p process.execPath)")")" "$TOOLCHAIN"/node_modules/node/node_modules/node-linux-*; do
  if [ -f "$d/include/node/node.h" ]; then export npm_config_nodedir="$d"; break; fi
done
say "pnpm install"
pnpm install --frozen-lockfile --silent >&2
node -e 'require("ssh2/lib/protocol/crypto.js").bindingAvailable || process.exit(1)' 2>/dev/null ||
  say "ssh2's native crypto binding is not built (needs g++, make, python3): pushes use its slower JavaScript fallback"

say "component binaries (first build from Go modules takes minutes; cached in ~/.cache)"
node cli/hardwire.ts components build kubernetes etcd etcdctl etcdutl >&2
# kube-bench for `hardwire cis`: from its pinned source archive (../shared/sources, or
# $HARDWIRE_KUBE_BENCH_SOURCE), else the release download. Not fatal: `hardwire cis` tries again.
node cli/hardwire.ts components build kube-bench >&2 || say "kube-bench not built yet; \"hardwire cis\" builds it on first use"
# The k0s plane of `compare` (and the tests): k0s from its pinned source archive (../shared/sources,
# or $HARDWIRE_K0S_SOURCE; else the release download), and the etcd and konnectivity-server it pins.
# About 8 minutes the first time, so only for the scripts that need it.
case "${1:-}" in
  test|compare) node cli/hardwire.ts components build k0s k0s-etcd konnectivity-server >&2 ;;
esac
# The arm64 lab rootfs (lab up --arm64-workers): debootstrap's second stage under qemu-user, 3.5 min
# once at load 2 on 2 cores (5.5 min at load 7), so a test's lab up with arm64 hosts takes seconds.
if [ "${1:-}" = test ]; then
  node scripts/lab-rootfs.ts --arm64 >&2
fi
# The upgrade test (test/upgrade-apply.test.ts) rolls a cluster with workers from v1.36.3 to v1.37.2:
# the target's control plane, its kubelet and kube-proxy (the kubernetes-node module at v1.37.2; the
# rest of a worker, containerd, runc, CNI, CoreDNS and pause, is the same in both rows of the version
# table), etcd v3.7.0, and v3.6.16, the patch etcd passes through to 3.7.
# One build at a time: 38 min the first time on 2 cores at load average 20, most of it the control plane (README).
# kubeadm v1.37.2 too: compare --upgrade-to (test/compare.test.ts) runs its real `upgrade plan` on the kubeadm plane.
if [ "${1:-}" = test ]; then
  node cli/hardwire.ts components build --kubernetes-version v1.37.2 kube-apiserver kube-controller-manager kube-scheduler kubeadm etcd etcdctl etcdutl >&2
  node cli/hardwire.ts components build --kubernetes-version v1.37.2 kubelet kube-proxy >&2
  node cli/hardwire.ts components build --version v3.6.16 etcd etcdctl etcdutl >&2
fi
# `flags prove` and `trace apply` (and their test): the debug kube-scheduler, kube-controller-manager
# and kube-apiserver (-N -l, symbols kept) and delve, cached like the release builds. The three
# Kubernetes ones are one go build.
# Only for the tests; `flags prove` builds them on first use otherwise.
case "${1:-}" in
  test) nice -n 10 node cli/hardwire.ts components build kube-scheduler-debug kube-controller-manager-debug kube-apiserver-debug dlv >&2 ;;
esac
# The opt-in metrics-server addon (cluster.addons, docs/addons.md) that test/addons-wire.test.ts wires:
# its binary, from sigs.k8s.io/metrics-server v0.8.0. wire builds it on first use otherwise.
case "${1:-}" in
  test) nice -n 10 node cli/hardwire.ts components build metrics-server >&2 ;;
esac
# What a worker runs (kubelet, kube-proxy, containerd, runc, the CNI plugins, CoreDNS, pause and the
# image builder; crictl, which the kubeadm plane's hosts get), from the Go module proxy and pause.c.
# About 8 minutes the first time on 2 cores.
# The built-in lab's hosts are workers, so wire needs them too.
node cli/hardwire.ts components build workers >&2
# arm64 hosts (issue 43): busybox-static:arm64, unpacked under the cache, is the arm64 busybox
# image's one binary. The test step builds what an arm64 worker runs (test/vm.test.ts plans one).
busybox_arm64="${HARDWIRE_CACHE:-$HOME/.cache/hardwire}/debs/busybox-static-arm64"
if [ ! -x "$busybox_arm64/bin/busybox" ]; then
  say "unpacking Debian's busybox-static:arm64 into $busybox_arm64"
  deb_tmp="$(mktemp -d)"
  (cd "$deb_tmp" && chmod 777 . && apt-get download -qq busybox-static:arm64 >&2)
  mkdir -p "$busybox_arm64"
  dpkg-deb -x "$deb_tmp"/busybox-static_*_arm64.deb "$busybox_arm64"
  rm -rf "$deb_tmp"
fi
if [ "${1:-}" = test ]; then
  node cli/hardwire.ts components build workers --arch arm64 >&2
fi
# The builds' intermediates (about 15 GB after the builds above; core/components/binaries/go-env.ts):
# the binaries are cached, and a lab's kubelets evict Pods on a fuller disk (lab up refuses below 20%
# free). A small cache stays: the few hundred MB that test/components.test.ts's etcd rebuilds leave
# make those rebuilds take seconds instead of minutes in the next run.
components_cache="$HOME/.cache/hardwire/go-build-components"
if [ -d "$components_cache" ] && [ "$(du -sm "$components_cache" | cut -f1)" -gt 2048 ]; then
  say "removing the component builds' Go build cache ($(du -sh "$components_cache" | cut -f1)); the binaries stay cached"
  rm -rf "$components_cache"
fi
