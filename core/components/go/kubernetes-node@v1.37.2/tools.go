//go:build tools

// Package tools pins the Kubernetes node commands this module builds: the kubelet and kube-proxy
// of a worker. They sit apart from components/go/kubernetes so that building the control plane
// does not build them (and a control-plane-only wire does not pay for them).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
