//go:build tools

// Package tools pins konnectivity-server at the version k0s v1.36.3+k0s.2 runs by default
// (konnectivity_version in its embedded-bins/Makefile.variables). The proxy refuses the module's
// version list but serves this exact version.
package tools

import _ "sigs.k8s.io/apiserver-network-proxy/cmd/server"
