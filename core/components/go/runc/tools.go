//go:build tools

// Package tools pins runc at the version k0s v1.36.3+k0s.2 runs (runc_version in its
// embedded-bins/Makefile.variables). The module root is runc's main package.
package tools

import _ "github.com/opencontainers/runc"
