// Package preflight checks, before a release is applied, the objects a
// cluster holds against the release's CRDs: which the new schema refuses,
// with the API server's validation ratcheting taken into account.
//
// # The rule
//
// An object is refused when an API server that holds it and the new CRD
// refuses an update of it that changes one annotation: the smallest write
// an object sees, as a label from kubectl, a finalizer added, or removed
// at deletion. Ratcheting (CRD validation ratcheting, GA in Kubernetes
// 1.33) lets through every check of a value that update leaves as it was,
// so what is refused is what ratcheting cannot keep: CEL rules on the
// object's root (a name rule), which every update changes, transition
// rules, list types the object already broke, and the like. An object
// that only a create would fail (a restore from a backup, kubectl create
// of its manifest) is reported as kept by ratcheting.
//
// # How
//
// The judge is a real API server, not a copy of its rules: Check reads the
// objects from the cluster (read only), and on a scratch API server of its
// own, for each version both CRDs serve, installs the new CRD with that
// version alone, asks for a dry-run create of each object, installs a CRD
// that takes anything, writes the objects as they are, installs the new
// CRD again and asks for a dry-run update of each that changes one
// annotation. The scratch server is opgen's local control plane
// (cmd/opgen/preflight starts it); its Kubernetes version decides the
// rules, and a cluster older than 1.33 may ratchet less.
package preflight

import (
	"context"
	"fmt"
	"io"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Options are what Check needs.
type Options struct {
	// Cluster is the cluster whose objects are checked. Check only reads
	// it: CRDs, and the objects of their kinds.
	Cluster *rest.Config
	// Scratch is an API server of Check's own: it installs CRDs and
	// writes copies of the objects there.
	Scratch *rest.Config
	// CRDs are the CRDs of the release.
	CRDs []*apiextensionsv1.CustomResourceDefinition
}

// Report is what Check found, by CRD and version.
type Report struct {
	Versions []VersionReport
}

// VersionReport is the check of one version of one CRD.
type VersionReport struct {
	CRD, Version string
	// Skipped says why the version was not checked; "" when it was.
	Skipped string
	// Objects is the number of objects checked.
	Objects int
	// Refused are the objects an update refuses: the release would leave
	// them unwritable.
	Refused []Verdict
	// Ratcheted are the objects a create refuses and an update lets
	// through: writable while the values stay as they are.
	Ratcheted []Verdict
}

// Verdict is the API server's answer for one object.
type Verdict struct {
	Namespace, Name string
	// Message is the API server's error.
	Message string
}

// Refused reports whether any object is refused.
func (r *Report) Refused() bool {
	for _, v := range r.Versions {
		if len(v.Refused) > 0 {
			return true
		}
	}
	return false
}

// Check checks the objects of every CRD of opts.CRDs that the cluster has.
func Check(ctx context.Context, opts Options) (*Report, error) {
	c, err := newChecker(opts)
	if err != nil {
		return nil, err
	}
	report := &Report{}
	crds := append([]*apiextensionsv1.CustomResourceDefinition(nil), opts.CRDs...)
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name < crds[j].Name })
	for _, crd := range crds {
		versions, err := c.checkCRD(ctx, crd)
		if err != nil {
			return nil, fmt.Errorf("preflight of %s: %w", crd.Name, err)
		}
		report.Versions = append(report.Versions, versions...)
	}
	return report, nil
}

// checker holds the clients of both API servers.
type checker struct {
	cluster, scratch       dynamic.Interface
	clusterCRDs, scratchCR apiextensionsclient.Interface
	scratchCore            kubernetes.Interface
}

func newChecker(opts Options) (*checker, error) {
	c := &checker{}
	var err error
	if c.cluster, err = dynamic.NewForConfig(opts.Cluster); err != nil {
		return nil, err
	}
	if c.scratch, err = dynamic.NewForConfig(opts.Scratch); err != nil {
		return nil, err
	}
	if c.clusterCRDs, err = apiextensionsclient.NewForConfig(opts.Cluster); err != nil {
		return nil, err
	}
	if c.scratchCR, err = apiextensionsclient.NewForConfig(opts.Scratch); err != nil {
		return nil, err
	}
	c.scratchCore, err = kubernetes.NewForConfig(opts.Scratch)
	return c, err
}

// checkCRD checks each version that the cluster's CRD and crd both serve.
func (c *checker) checkCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) ([]VersionReport, error) {
	live, err := c.clusterCRDs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return []VersionReport{{CRD: crd.Name, Skipped: "the cluster has no such CRD: nothing is stored"}}, nil
	}
	if err != nil {
		return nil, err
	}
	var out []VersionReport
	for _, v := range crd.Spec.Versions {
		r := VersionReport{CRD: crd.Name, Version: v.Name}
		switch {
		case !v.Served:
			r.Skipped = "not served by the release"
		case !serves(live, v.Name):
			r.Skipped = "not served by the cluster: new in this release, its objects are what the conversion makes of the others"
		default:
			if err := c.checkVersion(ctx, crd, v.Name, &r); err != nil {
				return nil, err
			}
		}
		out = append(out, r)
	}
	return out, nil
}

func serves(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	for _, v := range crd.Spec.Versions {
		if v.Name == version && v.Served {
			return true
		}
	}
	return false
}

// Print writes the report for a person.
func (r *Report) Print(w io.Writer) {
	for _, v := range r.Versions {
		name := v.CRD
		if v.Version != "" {
			name += " " + v.Version
		}
		if v.Skipped != "" {
			fmt.Fprintf(w, "%s: not checked: %s\n", name, v.Skipped)
			continue
		}
		fmt.Fprintf(w, "%s: %d object(s) checked, %d refused, %d kept writable by ratcheting\n", name, v.Objects, len(v.Refused), len(v.Ratcheted))
		for _, o := range v.Refused {
			fmt.Fprintf(w, "  refused: %s: every update fails, a finalizer's removal included: %s\n", o.key(), o.Message)
		}
		for _, o := range v.Ratcheted {
			fmt.Fprintf(w, "  kept by ratcheting: %s: updates pass while the values stay as they are; a create of it fails: %s\n", o.key(), o.Message)
		}
	}
}

func (v Verdict) key() string {
	if v.Namespace == "" {
		return v.Name
	}
	return v.Namespace + "/" + v.Name
}
