//go:build hardwire_targets

// The node commands the analyzer loads, in a module of their own (as components/go/kubernetes-node
// builds them) so that the control plane's build list stays that of components/go/kubernetes.
package main

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
