//go:build tools

// Package tools pins the etcd that k0s v1.36.3+k0s.2 runs (etcd_version in its
// embedded-bins/Makefile.variables), so that the k0s plane is k0s as released. hardwire's own
// plane runs the etcd kubeadm pins (components/go/etcd).
package tools

import _ "go.etcd.io/etcd/server/v3"
