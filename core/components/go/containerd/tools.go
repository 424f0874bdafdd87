//go:build tools

// Package tools pins containerd at the version k0s v1.36.3+k0s.2 runs (containerd_version_and_rev
// in its embedded-bins/Makefile.variables: 2.3.3@aad11006): the daemon, its runc shim and ctr.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
