//go:build tools

// Package tools pins kube-vip, the VIP that fronts every control-plane host's kube-apiserver
// (issue 41). The proxy refuses the module's version list but serves this exact version.
package tools

import _ "github.com/kube-vip/kube-vip"
