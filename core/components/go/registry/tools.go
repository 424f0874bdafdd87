//go:build tools

// Package tools pins the CNCF distribution registry (github.com/distribution/distribution/v3),
// served on the lab's first control-plane host as the mirror containerd pulls docker.io images
// from. v3.0.0: the first v3 release the Go module proxy serves.
package tools

import _ "github.com/distribution/distribution/v3/cmd/registry"
