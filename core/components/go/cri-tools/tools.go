//go:build tools

// Package tools pins crictl, the CRI client kubeadm's docs use to list a node's containers
// (github.com/kubernetes-sigs/cri-tools). v1.37.0: the Go module proxy serves v1.34.0 and v1.37.0
// of sigs.k8s.io/cri-tools and none for v1.36; crictl speaks CRI v1, which containerd v2.3.3 serves.
package tools

import _ "sigs.k8s.io/cri-tools/cmd/crictl"
