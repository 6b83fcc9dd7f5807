package preflight

import (
	"context"
	"fmt"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
)

// probeField is a root field only the scratch CRDs have: the strict one
// refuses any value of it, the permissive one takes it, so that a dry-run
// create of a probe tells which of the two the scratch server serves.
const probeField = "opgenPreflightProbe"

// touched is the annotation the dry-run update changes.
const touched = "preflight.opgen.dev/touched"

// scratchCRDs returns crd cut to version, as the scratch server installs
// it: strict, with the release's schema, and permissive, which takes any
// object as it is, so that objects the strict one refuses can be written.
func scratchCRDs(crd *apiextensionsv1.CustomResourceDefinition, version string) (strict, permissive *apiextensionsv1.CustomResourceDefinition) {
	strict = &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: crd.Name},
		Spec:       *crd.Spec.DeepCopy(),
	}
	strict.Spec.Conversion = nil
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			v = *v.DeepCopy()
			v.Served, v.Storage = true, true
			strict.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{v}
		}
	}
	root := strict.Spec.Versions[0].Schema.OpenAPIV3Schema
	if root.Properties == nil {
		root.Properties = map[string]apiextensionsv1.JSONSchemaProps{}
	}
	root.Properties[probeField] = apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: ptr.To[int64](0)}
	permissive = strict.DeepCopy()
	pv := &permissive.Spec.Versions[0]
	pv.Subresources, pv.AdditionalPrinterColumns, pv.SelectableFields = nil, nil, nil
	pv.Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", XPreserveUnknownFields: ptr.To(true),
		Properties: map[string]apiextensionsv1.JSONSchemaProps{probeField: {Type: "string"}},
	}}
	return strict, permissive
}

// scratchRun is the check of one version on the scratch server.
type scratchRun struct {
	c          *checker
	crd        *apiextensionsv1.CustomResourceDefinition
	gvr        schema.GroupVersionResource
	namespaced bool
}

func (s *scratchRun) resource(namespace string) dynamic.ResourceInterface {
	if s.namespaced {
		return s.c.scratch.Resource(s.gvr).Namespace(namespace)
	}
	return s.c.scratch.Resource(s.gvr)
}

// install creates or replaces the scratch CRD with crd and waits until
// the server serves it: strict says which of the two.
func (s *scratchRun) install(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, strict bool) error {
	api := s.c.scratchCR.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := api.Create(ctx, crd, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		existing, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		update := crd.DeepCopy()
		update.ResourceVersion = existing.ResourceVersion
		if _, err := api.Update(ctx, update, metav1.UpdateOptions{}); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	what := "the permissive CRD"
	if strict {
		what = "the release's CRD"
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := s.probe(ctx)
		if strict {
			return err != nil && strings.Contains(err.Error(), probeField), nil
		}
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the scratch API server did not serve %s of %s within 30 s: %w", what, crd.Name, err)
	}
	return nil
}

// probe asks for a dry-run create of an object with only probeField.
func (s *scratchRun) probe(ctx context.Context) error {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": s.gvr.GroupVersion().String(), "kind": s.crd.Spec.Names.Kind,
		"metadata": map[string]any{"name": "probe"}, probeField: "x",
	}}
	_, err := s.resource("default").Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// remove deletes the scratch CRD, and with it the copies, and waits until
// it is gone, so that the next version starts afresh.
func (s *scratchRun) remove(ctx context.Context) error {
	api := s.c.scratchCR.ApiextensionsV1().CustomResourceDefinitions()
	if err := api.Delete(ctx, s.crd.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := api.Get(ctx, s.crd.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("the scratch API server did not delete CRD %s and its copies within 2 minutes: %w", s.crd.Name, err)
	}
	return nil
}

// namespaces creates in the scratch server the namespaces of objects.
func (s *scratchRun) namespaces(ctx context.Context, objects []unstructured.Unstructured) error {
	seen := map[string]bool{"": true, "default": true}
	for _, o := range objects {
		ns := o.GetNamespace()
		if seen[ns] {
			continue
		}
		seen[ns] = true
		nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		_, err := s.c.scratch.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, nsObj, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}
