package preflight

import (
	"context"
	"fmt"
	"strconv"

	"golang.org/x/sync/errgroup"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// checkVersion checks the cluster's objects of one version of crd on the
// scratch server: a dry-run create under the release's CRD, a copy
// written under the permissive one, and a dry-run update of the copy
// under the release's CRD again.
func (c *checker) checkVersion(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, version string, r *VersionReport) (err error) {
	s := &scratchRun{
		c: c, crd: crd, namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		gvr: schema.GroupVersionResource{Group: crd.Spec.Group, Version: version, Resource: crd.Spec.Names.Plural},
	}
	objects, err := c.list(ctx, s.gvr)
	if err != nil {
		return fmt.Errorf("list %s in the cluster: %w", s.gvr, err)
	}
	r.Objects = len(objects)
	if len(objects) == 0 {
		return nil
	}
	strict, permissive := scratchCRDs(crd, version)
	defer func() {
		if rmErr := s.remove(ctx); err == nil {
			err = rmErr
		}
	}()
	if err := s.install(ctx, strict, true); err != nil {
		return err
	}
	if err := s.namespaces(ctx, objects); err != nil {
		return err
	}
	created := make([]error, len(objects))
	_ = forEach(ctx, len(objects), func(i int) error {
		created[i] = s.create(ctx, &objects[i], true)
		return nil
	})
	if err := s.install(ctx, permissive, false); err != nil {
		return err
	}
	err = forEach(ctx, len(objects), func(i int) error {
		if err := s.create(ctx, &objects[i], false); err != nil {
			return fmt.Errorf("copy %s to the scratch API server: %w", key(&objects[i]), err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.install(ctx, strict, true); err != nil {
		return err
	}
	touched := make([]error, len(objects))
	_ = forEach(ctx, len(objects), func(i int) error {
		touched[i] = s.touch(ctx, &objects[i])
		return nil
	})
	for i := range objects {
		v := Verdict{Namespace: objects[i].GetNamespace(), Name: objects[i].GetName()}
		switch {
		case touched[i] != nil:
			v.Message = touched[i].Error()
			r.Refused = append(r.Refused, v)
		case created[i] != nil:
			v.Message = created[i].Error()
			r.Ratcheted = append(r.Ratcheted, v)
		}
	}
	return nil
}

// workers is how many requests to the scratch server run at once.
const workers = 8

// forEach runs do for 0..n-1, workers at a time, and returns the first
// error.
func forEach(ctx context.Context, n int, do func(i int) error) error {
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i := range n {
		g.Go(func() error { return do(i) })
	}
	return g.Wait()
}

func key(o *unstructured.Unstructured) string { return o.GetNamespace() + "/" + o.GetName() }

// list reads every object of gvr in the cluster, in pages of 500.
func (c *checker) list(ctx context.Context, gvr schema.GroupVersionResource) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	opts := metav1.ListOptions{Limit: 500}
	for {
		page, err := c.cluster.Resource(gvr).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// create writes a copy of o, without what the API server sets, as a dry
// run when dryRun. The copy has no finalizers, so that the scratch server
// deletes it with its CRD: rules that read metadata.finalizers judge it
// without them.
func (s *scratchRun) create(ctx context.Context, o *unstructured.Unstructured, dryRun bool) error {
	cp := o.DeepCopy()
	for _, field := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "finalizers"} {
		unstructured.RemoveNestedField(cp.Object, "metadata", field)
	}
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err := s.resource(o.GetNamespace()).Create(ctx, cp, opts)
	return err
}

// touch asks for a dry-run update of the copy of o that changes one
// annotation.
func (s *scratchRun) touch(ctx context.Context, o *unstructured.Unstructured) error {
	res := s.resource(o.GetNamespace())
	cp, err := res.Get(ctx, o.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	annotations := cp.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[touched] = strconv.Itoa(len(annotations[touched]) + 1)
	cp.SetAnnotations(annotations)
	_, err = res.Update(ctx, cp, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}
