// Command etcd is the etcd server, built from go.etcd.io/etcd/server/v3 for
// opgen's local control plane. It is the upstream etcd main, nothing more.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
