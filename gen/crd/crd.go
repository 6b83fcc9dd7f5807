// Package crd generates the CustomResourceDefinitions of the project's
// kinds into config/crd/<group>_<plural>.yaml, with controller-tools' CRD
// generator on the run's shared packages. Every kubebuilder validation,
// default, CEL (XValidation), printcolumn, resource, subresource,
// storageversion and multi-version marker works as with controller-gen.
package crd

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	ctcrd "sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/genall"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/pkg/webhook/hooks"
)

// Generator writes one CRD manifest per kind.
type Generator struct{ gen.FromCRDs }

var (
	_ gen.Generator = Generator{}
	_ gen.CRDReader = Generator{}
)

func (Generator) ct() ctcrd.Generator {
	// The tool-version annotation would name controller-gen, which did
	// not run; the schema does not depend on it.
	return ctcrd.Generator{OmitToolVersion: ptr.To(true)}
}

// CheckFilter limits type-checking to what the CRD generator needs.
func (g Generator) CheckFilter() loader.NodeFilter { return g.ct().CheckFilter() }

// Generate writes the CRDs, from the run's shared CRD parser
// (gen.Context.CRDs), as controller-gen's crd generator writes them; stale
// generated manifests in the CRD directory (its *.yaml files that carry
// opgen's header) are removed.
func (g Generator) Generate(ctx *gen.Context) error {
	dir := ctx.Project.CRDDir
	ctx.Output.OwnMatching(ctx.Project.Abs(dir), "*.yaml")
	gctx := ctx.GenerationContext(dir, ctx.API.Packages())
	for _, shared := range ctx.CRDs() {
		crd, err := forWriting(shared, ctx.Project.CRDMaxDescLen)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("%s_%s.yaml", crd.Spec.Group, crd.Spec.Names.Plural)
		if err := gctx.WriteYAML(name, "", []any{crd}, genall.WithTransform(removeStatus), genall.WithTransform(genall.TransformRemoveCreationTimestamp)); err != nil {
			return err
		}
	}
	return addConversions(ctx)
}

// forWriting prepares a CRD of the parser for its manifest, as
// controller-gen's crd generator does: its descriptions capped at
// maxDescLen (crd:maxDescLen) when set, the top-level metadata schema
// reduced to its type, converted to apiextensions.k8s.io/v1.
func forWriting(shared *apiextensionsv1.CustomResourceDefinition, maxDescLen *int) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := shared.DeepCopy()
	if maxDescLen != nil {
		for _, v := range crd.Spec.Versions {
			if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				ctcrd.TruncateDescription(v.Schema.OpenAPIV3Schema, *maxDescLen)
			}
		}
	}
	ctcrd.FixTopLevelMetadata(*crd)
	conv, err := ctcrd.AsVersion(*crd, apiextensionsv1.SchemeGroupVersion)
	if err != nil {
		return nil, fmt.Errorf("crd: %s: %w", crd.Name, err)
	}
	out, ok := conv.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil, fmt.Errorf("crd: %s: converted to %T", crd.Name, conv)
	}
	return out, nil
}

// removeStatus drops the CRD's status from its manifest.
func removeStatus(obj map[string]any) error {
	delete(obj, "status")
	return nil
}

// ConversionNamespace is the namespace config/crd gives the webhook Service
// of a conversion stanza: kustomize's namespace transformer and `opgen
// manifests` replace it with the operator's.
const ConversionNamespace = "system"

// addConversions gives the CRD of each kind whose served versions differ
// the conversion stanza of hooks.Conversion: strategy Webhook, through
// the operator's webhook Service. The caBundle is left out: the runtime
// (or cert-manager's CA injector) fills it in.
func addConversions(ctx *gen.Context) error {
	files := ctx.Output.Files()
	if !ctx.API.HasConversionWebhook() {
		return nil
	}
	for _, c := range ctx.API.ServedConversions() {
		path := ctx.Project.Abs(filepath.Join(ctx.Project.CRDDir, c.Hub.Version.Group.Name+"_"+c.Hub.Plural+".yaml"))
		data, ok := files[path]
		if !ok {
			return fmt.Errorf("crd: no CRD staged at %s for the conversion of %s", path, c.Hub.Name)
		}
		stanza, err := yaml.Marshal(map[string]any{"conversion": hooks.Conversion(hooks.ServiceClientConfig(ctx.Project.Name, ConversionNamespace, nil))})
		if err != nil {
			return err
		}
		out, err := insertUnderSpec(data, stanza)
		if err != nil {
			return fmt.Errorf("crd: %s: %w", path, err)
		}
		ctx.Output.YAML(path, out)
	}
	return nil
}

// insertUnderSpec inserts the top-level YAML fields of stanza at the start
// of data's spec, indented, keeping the rest of data as controller-tools
// wrote it.
func insertUnderSpec(data, stanza []byte) ([]byte, error) {
	at := bytes.Index(data, []byte("\nspec:\n"))
	if at < 0 {
		return nil, errors.New("no spec: field to add the conversion stanza to")
	}
	at += len("\nspec:\n")
	var indented bytes.Buffer
	for _, line := range bytes.SplitAfter(bytes.TrimRight(stanza, "\n"), []byte("\n")) {
		indented.WriteString("  ")
		indented.Write(line)
	}
	indented.WriteString("\n")
	return slices.Concat(data[:at], indented.Bytes(), data[at:]), nil
}
