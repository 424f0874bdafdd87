//go:build tools

// Package tools pins metrics-server (sigs.k8s.io/metrics-server), the cluster addon behind the
// metrics.k8s.io APIService and `kubectl top` (issue 44). v0.8.0: the release the Go module proxy
// serves; its cmd/metrics-server is in the module itself.
package tools

import _ "sigs.k8s.io/metrics-server/cmd/metrics-server"
