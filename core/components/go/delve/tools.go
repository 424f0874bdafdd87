//go:build tools

// Package tools pins delve, the debugger `hardwire flags prove` runs a debug build under
// (issue 25); the Go module proxy serves github.com/go-delve/delve v1.27.2.
package tools

import _ "github.com/go-delve/delve/cmd/dlv"
