//go:build tools

// Package tools pins CoreDNS at the version kubeadm v1.36.3 deploys (CoreDNSVersion in
// cmd/kubeadm/app/constants/constants.go). The module root is CoreDNS's main package.
package tools

import _ "github.com/coredns/coredns"
