//go:build hardwire_targets

package etcd

import _ "go.etcd.io/etcd/server/v3/etcdmain"
