// Package controlplane builds and locates the binaries of opgen's local
// Kubernetes control plane: etcd, kube-apiserver, kube-controller-manager and
// kubectl.
//
// Nothing is downloaded prebuilt. The binaries are compiled from Go modules
// pinned in hack/controlplane (k8s.io/kubernetes for the Kubernetes parts,
// go.etcd.io/etcd/server/v3 for etcd); this package embeds a copy of those
// module files so that the build works from the module cache too, for users
// who run opgen outside a checkout. `go generate` refreshes the copy and a
// test fails when it drifts.
//
// Binaries go to a versioned directory under the user cache
// (${XDG_CACHE_HOME:-$HOME/.cache}/opgen/controlplane/<version>/, or
// $OPGEN_CONTROLPLANE_DIR), are built only when missing, and the build holds a
// file lock so that parallel test packages build once.
package controlplane

//go:generate sh -c "cp ../../hack/controlplane/go.mod module/kube.go.mod && cp ../../hack/controlplane/go.sum module/kube.go.sum && cp ../../hack/controlplane/tools.go module/tools.go.txt && cp ../../hack/controlplane/etcd/go.mod module/etcd.go.mod && cp ../../hack/controlplane/etcd/go.sum module/etcd.go.sum && cp ../../hack/controlplane/etcd/main.go module/etcd_main.go.txt"
