//go:build tools

// Package tools pins the etcd commands this module builds. Both module roots are main
// packages (go.etcd.io/etcd/server/v3 is etcd's own "go getable" wrapper around
// etcdmain.Main), so no wrapper of ours is needed.
package tools

import (
	_ "go.etcd.io/etcd/etcdctl/v3"
	_ "go.etcd.io/etcd/etcdutl/v3"
	_ "go.etcd.io/etcd/server/v3"
)
