package model

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gobuffalo/flect"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/gengo/v2/namer"
	gengotypes "k8s.io/gengo/v2/types"
	"sigs.k8s.io/controller-tools/pkg/loader"

	"github.com/opgen-sdk/opgen/gen/markers"
	"github.com/opgen-sdk/opgen/pkg/webhook/hooks"
)

// API is the model of the project's API: its groups, versions, kinds and
// controllers, derived from kubebuilder and opgen markers. Generators work
// from it rather than from the markers.
type API struct {
	// Groups are sorted by name.
	Groups []*Group
	// BuiltinControllers are the controllers of built-in kinds: the types
	// of the controller package marked +opgen:controller:for, sorted by
	// name.
	BuiltinControllers []*BuiltinController
	// Conversions are the kinds whose served versions differ, which the
	// operator converts between (see hub.go), by group and kind.
	Conversions []*Conversion
	// ClientOnly are the packages with a group and a +genclient line but
	// no kind, which client-gen gives a group client all the same; only
	// when the clients follow client-gen's selection (Options.ClientKinds).
	ClientOnly []*Version
	// schemas makes the CRD parser of the API packages on first use.
	schemas func() *schemas
	// projectServesConversions is Options.ProjectServesConversions.
	projectServesConversions bool
}

// Group is an API group, declared with +groupName.
type Group struct {
	Name string
	// GoNameOverride is the +groupGoName of its packages, or "".
	GoNameOverride string
	goNamePos      token.Position
	// Versions are sorted by name.
	Versions []*Version
}

// GoName is the group's identifier in generated Go, as client-gen names
// it: its +groupGoName, or its first DNS label, capitalized
// (hello.example.com: Hello).
func (g *Group) GoName() string {
	if g.GoNameOverride != "" {
		return g.GoNameOverride
	}
	return flect.Capitalize(g.ShortName())
}

// ShortName is the first DNS label of the group.
func (g *Group) ShortName() string { return strings.ToLower(strings.SplitN(g.Name, ".", 2)[0]) }

// Version is one package of API types: a group version.
type Version struct {
	Group *Group
	Name  string
	// Package is the Go package; Dir and ImportPath locate it.
	Package    *loader.Package
	Dir        string
	ImportPath string
	// Kinds are the root kinds that are not lists, sorted by name.
	Kinds []*Kind
	// Objects are the names of every root object of the package, the
	// kinds, their lists and other objects (subresources, options),
	// sorted: what a scheme registers.
	Objects []string
	// Pos is where the package declares its group.
	Pos token.Position
	// NoCRD says the package gets no CRD: it is marked +kubebuilder:skip,
	// with which controller-gen makes no CRD of its kinds (an aggregated
	// API's types, say), or the run's CRD patterns leave it out
	// (Options.CRDDirs, like the paths of a project's controller-gen
	// call). Nothing that only a CRD needs (a hub, a schema without
	// floats) is asked of its kinds. They keep their deep copies,
	// registration, clients and conversions.
	NoCRD bool
	// ClientInput says that the package is an input of the client
	// generators: its group version gets a typed client, with the clients
	// of its kinds that have Kind.Client.
	ClientInput bool
	// SharedWith is the first package of the same group version, when
	// another package declares it too (test packages that reuse one): its
	// kinds join the same CRDs, as controller-gen merges them, but it gets
	// no client of its own.
	SharedWith *Version
	// alias is the import name assignAliases chose.
	alias string
}

// ClientLayout reports whether the package's directory is named after its
// version, as code-generator's client generators need, and the package is
// the only one of its group version (SharedWith).
func (v *Version) ClientLayout() bool { return filepath.Base(v.Dir) == v.Name && v.SharedWith == nil }

// GroupVersion returns the version's group and version.
func (v *Version) GroupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: v.Group.Name, Version: v.Name}
}

// Alias is the import name generated code gives the version's package:
// the group's first DNS label and the version (fixture.opgen.dev/v1:
// fixturev1), unless that is the name of a Kubernetes API package
// (batchv1 for k8s.io/api/batch/v1) or of another group's version; then
// the group's next labels are added until every version of the group has
// a name of its own (batch.tutorial.kubebuilder.io/v1:
// batchtutorialv1). See assignAliases.
func (v *Version) Alias() string {
	if v.alias != "" {
		return v.alias
	}
	// A version outside a model (opgen create api): it stays clear of
	// Kubernetes' packages.
	return freeAlias(strings.Split(v.Group.Name, "."), []*Version{v}, reservedAliases())[0]
}

// Kind is a root kind (+kubebuilder:object:root=true, not a list).
type Kind struct {
	Version *Version
	Name    string
	// Plural and Singular are the lower-case resource names.
	Plural, Singular string
	Namespaced       bool
	// StatusSubresource and ScaleSubresource say which subresources the
	// CRD serves.
	StatusSubresource, ScaleSubresource bool
	// Storage and Unserved say that +kubebuilder:storageversion and
	// +kubebuilder:unservedversion mark the kind: its version is the one
	// stored, or is not served. Skipped says that
	// +kubebuilder:skipversion leaves the version out of the CRD.
	Storage, Unserved, Skipped bool
	// HasList says whether the kind has a list type (<Kind>List).
	HasList bool
	// Client says whether the kind gets a typed client, lister and
	// informer: in a package whose kinds carry +genclient, the kinds that
	// do; otherwise every kind with a list type.
	Client bool
	// ClientTags are the kind's own +genclient tags, which client-gen
	// reads as written; empty when opgen derives them from the markers.
	ClientTags  []string
	clientVerbs clientTags
	// Controller is what the +opgen:controller markers say, or nil.
	Controller *markers.ControllerSpec
	// DeletesNow says the controller package calls plug.DeleteNow with an
	// action of the kind (see settleDeletesNow): RBAC keeps delete on its
	// retained kinds.
	DeletesNow bool
	// Projection is what the controller's cache keeps of the kind
	// (+opgen:controller:cacheSpec), or nil for all of it.
	Projection *Projection
	// Webhook is what the +opgen:webhook markers say, or nil.
	Webhook *Webhooks
	// ConversionWebhook says that the API server converts the kind's
	// versions through the operator's conversion webhook: set by the
	// conversion analysis, read by whatever needs the webhook server
	// (UsesWebhookServer).
	ConversionWebhook bool
	// Spec is the type's declaration; Pos is its name's position.
	Spec *ast.TypeSpec
	Pos  token.Position
}

// Webhooks are a kind's admission webhooks, as its +opgen:webhook markers
// declare them.
type Webhooks struct {
	markers.WebhookSpec
	// HasValidateDelete says the webhook type (WebhookType), as the
	// controller package declares it, has ValidateDelete: it checks
	// deletions (webhook.DeleteValidator).
	HasValidateDelete bool
	// Opaque says the webhook type's method set may hold more than opgen
	// sees, ValidateDelete included: it embeds a type of another package,
	// or the controller package is not among the packages of the run.
	Opaque bool
	// pos are the markers' positions, by marker name.
	pos map[string]token.Position
}

// ValidatesDelete reports whether the validating webhook is registered
// for DELETE: when the webhook type has ValidateDelete, or may have it
// (Opaque). The runtime registers the same from the type itself. A type
// that does not exist yet gets the stub, which has none.
func (w *Webhooks) ValidatesDelete() bool {
	return w.Validate && (w.HasValidateDelete || w.Opaque)
}

// WebhookType is the name of the type that holds the kind's webhook
// methods in the controller package: <Kind>Webhook.
func (k *Kind) WebhookType() string { return k.Name + "Webhook" }

// Pos is where the marker named name (opgen:webhook:validate) is.
func (w *Webhooks) Pos(name string) token.Position { return w.pos[name] }

// GVK returns the kind's group, version and kind.
func (k *Kind) GVK() schema.GroupVersionKind { return k.Version.GroupVersion().WithKind(k.Name) }

// ClientVersions returns the packages the client generators read: the
// versions that are client inputs, and the client-only packages, by group
// and version.
func (a *API) ClientVersions() []*Version {
	var out []*Version
	for _, v := range a.Versions() {
		if v.ClientInput {
			out = append(out, v)
		}
	}
	out = append(out, a.ClientOnly...)
	slices.SortStableFunc(out, func(x, y *Version) int {
		if c := strings.Compare(x.Group.Name, y.Group.Name); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	})
	return out
}

// Versions returns every version of every group, in order.
func (a *API) Versions() []*Version {
	var out []*Version
	for _, g := range a.Groups {
		out = append(out, g.Versions...)
	}
	return out
}

// Kinds returns every kind, by group, version and name.
func (a *API) Kinds() []*Kind {
	var out []*Kind
	for _, v := range a.Versions() {
		out = append(out, v.Kinds...)
	}
	return out
}

// Controllers returns the kinds that have a controller, by group, version
// and name.
func (a *API) Controllers() []*Kind {
	return slices.DeleteFunc(a.Kinds(), func(k *Kind) bool { return k.Controller == nil })
}

// HasControllers reports whether the project has any controller: a kind
// marked +opgen:controller or a handler of a built-in kind.
func (a *API) HasControllers() bool {
	return len(a.Controllers()) > 0 || len(a.BuiltinControllers) > 0
}

// Webhooks returns the kinds with admission webhooks
// (+opgen:webhook:validate or +opgen:webhook:default), by group, version
// and name.
func (a *API) Webhooks() []*Kind {
	return slices.DeleteFunc(a.Kinds(), func(k *Kind) bool { return k.Webhook == nil })
}

// UsesWebhookServer reports whether the operator serves webhooks: a kind
// with an admission webhook, or one converted by the conversion webhook.
// The manifests add the webhook Service, port and certificate RBAC then.
func (a *API) UsesWebhookServer() bool {
	for _, k := range a.Kinds() {
		if k.Webhook != nil || k.ConversionWebhook {
			return true
		}
	}
	return false
}

// AdmissionHooks describes the admission webhooks of the kinds to the API
// server, validating before mutating per kind, in the order of Webhooks.
func (a *API) AdmissionHooks() []hooks.Hook {
	var out []hooks.Hook
	for _, k := range a.Webhooks() {
		for _, t := range []struct {
			on bool
			ht hooks.HookType
		}{{k.Webhook.Validate, hooks.Validating}, {k.Webhook.Default, hooks.Mutating}} {
			if t.on {
				out = append(out, hooks.Hook{Type: t.ht, GVK: k.GVK(), Resource: k.Plural, Namespaced: k.Namespaced,
					Delete: t.ht == hooks.Validating && k.Webhook.ValidatesDelete()})
			}
		}
	}
	return out
}

// Kind returns the project's kind with gvk, or nil.
func (a *API) Kind(gvk schema.GroupVersionKind) *Kind {
	for _, k := range a.Kinds() {
		if k.GVK() == gvk {
			return k
		}
	}
	return nil
}

// FirstPos is where the first version declares its group, or no position
// when there is none.
func (a *API) FirstPos() token.Position {
	if vs := a.Versions(); len(vs) > 0 {
		return vs[0].Pos
	}
	return token.Position{}
}

// Packages returns the packages of every version, in order.
func (a *API) Packages() []*loader.Package {
	var out []*loader.Package
	for _, v := range a.Versions() {
		out = append(out, v.Package)
	}
	return out
}

// VersionFor returns the version declared by pkg, or nil.
func (a *API) VersionFor(pkg *loader.Package) *Version {
	for _, v := range a.Versions() {
		if v.Package == pkg {
			return v
		}
	}
	return nil
}

// Resource returns the plural resource of gvk: the project's own for its
// kinds, the served one for Kubernetes' built-in kinds, and the
// conventional guess for other kinds (custom resources of other projects).
func (a *API) Resource(gvk schema.GroupVersionKind) string {
	if k := a.Kind(gvk); k != nil {
		return k.Plural
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.Resource
}

// GoPlural is the kind's plural as generated Go names it: the clientset's
// accessor (Widgets) and the lister's methods. It follows the CRD's plural,
// so +kubebuilder:resource:path reaches the client too.
func (k *Kind) GoPlural() string {
	// client-gen's own plural, when the CRD's is the same word
	// (ReadOnly: ReadOnlies, not Readonlies).
	if p := pluralNamer.Name(&gengotypes.Type{Name: gengotypes.Name{Name: k.Name}}); strings.EqualFold(p, k.Plural) {
		return p
	}
	if lower := strings.ToLower(k.Name); strings.HasPrefix(k.Plural, lower) {
		return k.Name + k.Plural[len(lower):]
	}
	return flect.Capitalize(k.Plural)
}

var pluralNamer = namer.NewPublicPluralNamer(nil)

// ClientGroup is the name of the clientset method that returns the typed
// client of v's group version (FixtureV1).
func (v *Version) ClientGroup() string {
	return v.Group.GoName() + flect.Capitalize(v.Name)
}

// GroupDir is the directory above the version package, which code-generator
// names the group's output packages after.
func (v *Version) GroupDir() string { return strings.ToLower(filepath.Base(filepath.Dir(v.Dir))) }
