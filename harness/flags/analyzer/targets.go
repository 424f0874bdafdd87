//go:build hardwire_targets

// The packages the analyzer loads. Importing them here keeps them (and their exact versions) in
// go.mod/go.sum; the build tag keeps them out of the analyzer binary.
package main

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
