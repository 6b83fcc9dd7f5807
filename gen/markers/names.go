package markers

import (
	"fmt"
	"slices"
	"strings"

	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
)

// NamesOwned says that the controller names the objects it owns after
// the object itself: a Greeting "web" owns the Deployment "web" and the
// Service "web". Its name must then also be a valid name of each owned
// kind, and some kinds are stricter than the DNS subdomain every object's
// name is: a Service's name is a DNS-1035 label (at most 63 characters,
// lower-case letters, digits and '-', starting with a letter), a
// Namespace's a DNS-1123 label, a Job's at most 63 characters long, a
// CronJob's at most 52. The CRD gets a CEL rule on metadata.name for the
// strictest of the kinds of +opgen:controller:owns, so that the API server
// refuses at create a name the controller could never use, instead of an
// object that stays Degraded.
//
//	// +opgen:controller:owns=apps/v1.Deployment;v1.Service
//	// +opgen:controller:namesOwned
//
// A controller that adds a suffix ("<name>-config") needs a shorter name:
// write that rule yourself with
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 56".
type NamesOwned struct{}

// ApplyToController records the marker; the rule is the CRD's
// (ApplyToSchema).
func (NamesOwned) ApplyToController(spec *ControllerSpec) error {
	spec.NamesOwned = true
	return nil
}

// ApplyToSchema adds the CEL rule on metadata.name to the kind's schema,
// from the owned kinds of the type's owns markers.
func (NamesOwned) ApplyToSchema(ctx *crdmarkers.SchemaContext, props *apiext.JSONSchemaProps) error {
	var owned []schema.GroupVersionKind
	if ctx != nil && ctx.TypeInfo != nil {
		for _, v := range ctx.TypeInfo.Markers["opgen:controller:owns"] {
			refs, _ := v.(Owns)
			for _, ref := range refs {
				if gvk, err := ParseKindRef(ref); err == nil {
					owned = append(owned, gvk)
				}
			}
		}
	}
	rule, ok := OwnedNameRule(owned)
	if !ok {
		return nil // nothing stricter than a subdomain; the generator warns
	}
	kind := "the object"
	if ctx != nil && ctx.TypeInfo != nil {
		kind = ctx.TypeInfo.Name
	}
	props.XValidations = append(props.XValidations, apiext.ValidationRule{Rule: rule.CEL(), Message: rule.Message(kind)})
	return nil
}

// NameRule is what a kind asks of an object's name beyond the DNS
// subdomain (at most 253 characters) every object's name is.
type NameRule struct {
	// Format is "" (a DNS subdomain), "DNS-1123 label" or "DNS-1035
	// label".
	Format string
	// MaxLength is the longest name.
	MaxLength int
	// Kinds are the owned kinds that ask for it, as owns names them.
	Kinds []string
}

// Name formats of the kinds in ownedNames, strictest last.
const (
	dns1123Label = "DNS-1123 label"
	dns1035Label = "DNS-1035 label"
)

var formatOrder = []string{"", dns1123Label, dns1035Label}

// ownedNames are the built-in kinds whose names are stricter than a DNS
// subdomain, as Kubernetes validates them.
var ownedNames = map[schema.GroupVersionKind]NameRule{
	{Version: "v1", Kind: "Service"}:                 {Format: dns1035Label, MaxLength: 63},
	{Version: "v1", Kind: "Namespace"}:               {Format: dns1123Label, MaxLength: 63},
	{Group: "batch", Version: "v1", Kind: "Job"}:     {MaxLength: 63},
	{Group: "batch", Version: "v1", Kind: "CronJob"}: {MaxLength: 52},
}

// OwnedNameRule is the strictest name rule of the kinds owned; false when
// none is stricter than a DNS subdomain.
func OwnedNameRule(owned []schema.GroupVersionKind) (NameRule, bool) {
	out := NameRule{MaxLength: 253}
	for _, gvk := range owned {
		r, ok := ownedNames[gvk]
		if !ok {
			continue
		}
		if slices.Index(formatOrder, r.Format) > slices.Index(formatOrder, out.Format) {
			out.Format = r.Format
		}
		out.MaxLength = min(out.MaxLength, r.MaxLength)
		out.Kinds = append(out.Kinds, FormatKindRef(gvk))
	}
	return out, len(out.Kinds) > 0
}

// CEL is the rule on the object's name.
func (r NameRule) CEL() string {
	size := fmt.Sprintf("size(self.metadata.name) <= %d", r.MaxLength)
	switch r.Format {
	case dns1035Label:
		return size + ` && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')`
	case dns1123Label:
		return size + ` && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`
	}
	return size
}

// Message is what the API server answers when kind's name breaks the rule.
func (r NameRule) Message(kind string) string {
	var what string
	switch r.Format {
	case dns1035Label:
		what = fmt.Sprintf("a DNS-1035 label: at most %d lower-case letters, digits and '-', starting with a letter and ending with a letter or digit", r.MaxLength)
	case dns1123Label:
		what = fmt.Sprintf("a DNS-1123 label: at most %d lower-case letters, digits and '-', starting and ending with a letter or digit", r.MaxLength)
	default:
		what = fmt.Sprintf("at most %d characters long", r.MaxLength)
	}
	return fmt.Sprintf("%s names its %s after itself (+opgen:controller:namesOwned), so its name must be %s", kind, strings.Join(r.Kinds, " and "), what)
}
