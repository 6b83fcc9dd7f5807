package k8stags

import (
	"encoding/json"
	"go/ast"
	"go/token"
	"slices"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/gengo/v2/codetags"
	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// Tag is a +k8s: tag read as a controller-tools marker. Its ApplyToSchema
// gives the value's schema what Table says; a tag that does not parse,
// or that Table does not read, gives nothing (Check warns).
//
//	// +k8s:maxLength=63
//	// +k8s:eachVal=+k8s:format=k8s-short-name
//	// +k8s:subfield(name)=+k8s:required
type Tag struct {
	tag codetags.Tag
	ok  bool
}

var (
	_ crdmarkers.ApplyPriorityMarker = Tag{}
	_ interface {
		ApplyToSchema(*crdmarkers.SchemaContext, *apiextensionsv1.JSONSchemaProps) error
	} = Tag{}
)

// ParseMarker parses the tag as validation-gen does (gengo's codetags).
func (t *Tag) ParseMarker(_, anonymousName, restFields string) error {
	raw := anonymousName
	if restFields != "" {
		raw += "=" + restFields
	}
	tag, err := codetags.Parse(raw)
	t.tag, t.ok = tag, err == nil
	return nil // Check reports it, as a warning
}

// ApplyToSchema applies the tag to the schema of its field or type. On
// Kubernetes' own types (native) only the tags controller-tools reads
// apply, as controller-tools applies them.
func (t Tag) ApplyToSchema(ctx *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps) error {
	switch {
	case !t.ok:
		return nil
	case native(ctx):
		return controllerTools(ctx, s, t.tag)
	}
	return constraint{t.tag}.apply(ctx, s)
}

// TypeTag is a Tag on a type. controller-tools reads no +k8s: tag on a
// type, so on Kubernetes' own types it gives nothing.
type TypeTag struct{ t Tag }

// ParseMarker parses the tag as Tag does.
func (t *TypeTag) ParseMarker(name, anonymousName, restFields string) error {
	return t.t.ParseMarker(name, anonymousName, restFields)
}

// ApplyToSchema applies the tag to the schema of its type.
func (t TypeTag) ApplyToSchema(ctx *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps) error {
	if native(ctx) {
		return nil
	}
	return t.t.ApplyToSchema(ctx, s)
}

// ApplyPriority is Tag's.
func (t TypeTag) ApplyPriority() crdmarkers.ApplyPriority { return t.t.ApplyPriority() }

// native reports whether the schema is of a type of Kubernetes' own
// modules (k8s.io/...), such as core/v1's pod template a CRD embeds: the
// API server validates those types with validation-gen's Go code, and in
// a CRD they keep the schema controller-gen gives them, so that a project
// gets the CRD controller-gen writes.
func native(ctx *crdmarkers.SchemaContext) bool {
	return ctx != nil && ctx.Package != nil && strings.HasPrefix(ctx.Package.PkgPath, "k8s.io/")
}

// controllerTools applies the tags that controller-tools itself reads on
// fields, as it applies them.
func controllerTools(ctx *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps, t codetags.Tag) error {
	v, err := strconv.ParseFloat(t.Value, 64)
	if err != nil {
		return nil
	}
	switch t.Name {
	case "k8s:minimum":
		return crdmarkers.Minimum(v).ApplyToSchema(ctx, s)
	case "k8s:maximum":
		return crdmarkers.Maximum(v).ApplyToSchema(ctx, s)
	case "k8s:maxItems":
		return crdmarkers.MaxItems(int(v)).ApplyToSchema(ctx, s)
	}
	return nil
}

// ApplyPriority applies the tags after kubebuilder's markers, in Table's
// order (priority).
func (t Tag) ApplyPriority() crdmarkers.ApplyPriority {
	return crdmarkers.ApplyPriority(priority(t.tag.Name))
}

// valueTags are the tags registered by name, on fields and types. Tags
// with arguments (subfield(name)=...) are found through the name "k8s",
// which controller-tools looks up for k8s:<name>(...)=<value>.
var valueTags = []string{
	"k8s:minimum", "k8s:maximum", "k8s:minLength", "k8s:maxLength", "k8s:minItems", "k8s:maxItems",
	"k8s:minProperties", "k8s:maxProperties", "k8s:format", "k8s:maxBytes", "k8s:neq",
	"k8s:eachVal", "k8s:eachKey", "k8s:update", "k8s:monotonic", "k8s:unique", "k8s",
}

// Register adds the tags to reg. Call it after controller-tools' CRD
// markers (crdmarkers.Register): +k8s:minimum, +k8s:maximum and
// +k8s:maxItems replace controller-tools' own, which would keep a looser
// bound of a kubebuilder marker in some runs and not in others, and
// +k8s:enum replaces its own to honor +k8s:enumExclude.
func Register(reg *markers.Registry) error {
	for _, name := range valueTags {
		for target, output := range map[markers.TargetType]any{markers.DescribesField: Tag{}, markers.DescribesType: TypeTag{}} {
			def, err := markers.MakeDefinition(name, target, output)
			if err != nil {
				return err
			}
			if err := reg.Register(def); err != nil {
				return err
			}
			reg.AddHelp(def, markers.SimpleHelp("Kubernetes declarative validation", "a +k8s: tag of validation-gen, read as opgen's table says (docs/generate.md)"))
		}
	}
	def, err := markers.MakeDefinition("k8s:enum", markers.DescribesType, Enum{})
	if err != nil {
		return err
	}
	return reg.Register(def)
}

// Enum is +k8s:enum on a string type: the enum of its constants, as
// controller-tools gives it, less those marked +k8s:enumExclude.
type Enum struct{}

// ApplyToSchema writes the type's enum.
func (Enum) ApplyToSchema(ctx *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps) error {
	if err := (crdmarkers.K8sEnum{}).ApplyToSchema(ctx, s); err != nil || native(ctx) {
		return err
	}
	excluded := excludedConstants(ctx)
	s.Enum = slices.DeleteFunc(s.Enum, func(v apiextensionsv1.JSON) bool {
		var str string
		return json.Unmarshal(v.Raw, &str) == nil && excluded[str]
	})
	return nil
}

// excludedConstants are the values of the constants of the package whose
// doc comment has +k8s:enumExclude.
func excludedConstants(ctx *crdmarkers.SchemaContext) map[string]bool {
	out := map[string]bool{}
	for _, f := range ctx.Package.Syntax {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				doc := vs.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				if doc == nil || !hasLine(doc, "+k8s:enumExclude") {
					continue
				}
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, err := strconv.Unquote(lit.Value); err == nil {
							out[s] = true
						}
					}
				}
			}
		}
	}
	return out
}

func hasLine(doc *ast.CommentGroup, text string) bool {
	for _, c := range doc.List {
		if strings.TrimSpace(strings.TrimPrefix(c.Text, "//")) == text {
			return true
		}
	}
	return false
}
