//go:build tools

// Package tools pins the CNI plugins a worker uses (bridge with host-local IPAM, loopback,
// portmap) at v1.9.1: k0s v1.36.3+k0s.2 names no CNI plugins release in embedded-bins, and its
// go.mod requires github.com/containernetworking/plugins v1.9.1, which the module proxy serves.
package tools

import (
	_ "github.com/containernetworking/plugins/plugins/ipam/host-local"
	_ "github.com/containernetworking/plugins/plugins/main/bridge"
	_ "github.com/containernetworking/plugins/plugins/main/loopback"
	_ "github.com/containernetworking/plugins/plugins/meta/portmap"
)
