package model

// Conversions: each multi-version kind's hub and spokes, whether the
// project converts it by hand, and what converting nothing would lose.

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
)

// Hubs and spokes
//
// A kind served in several versions of its group is stored in one, the
// hub: the version marked +kubebuilder:storageversion. The API server
// converts every other served version, a spoke, to and from the hub. When
// the served versions' schemas are identical (descriptions aside), the
// conversion is the API server's own (strategy None: it only rewrites
// apiVersion). When they differ, the CRD's conversion is Webhook and the
// generator writes the typed conversion of each spoke to and from the hub
// (package gen/conversion). Several served versions without a hub, or
// with two, are errors: controller-tools' message ("CRD for ... has no
// storage version") has no position, so the model reports them first.

// Conversion is a kind whose served versions differ: the operator converts
// between them.
type Conversion struct {
	// Hub is the kind in its storage version.
	Hub *Kind
	// Spokes are the kind in its other versions, newest first; an
	// unserved version is one as long as the CRD lists it, since objects
	// stored in it are still converted when they are read.
	Spokes []*Kind
	// Convertible is true when the kind converts itself as
	// controller-runtime's conversion package asks: the hub's type has
	// Hub() and every spoke's ConvertTo and ConvertFrom. opgen then
	// generates none of the kind's conversion and serves those methods.
	Convertible bool
}

// Resource is the conversion's resource (widgets).
func (c *Conversion) Resource() string { return c.Hub.Plural }

// HubGVK is the group, version and kind of the hub.
func (c *Conversion) HubGVK() schema.GroupVersionKind { return c.Hub.GVK() }

// ConversionOf returns the conversion of k's kind when k is its hub or one
// of its spokes, or nil.
func (a *API) ConversionOf(k *Kind) *Conversion {
	for _, c := range a.Conversions {
		if c.Hub == k || slices.Contains(c.Spokes, k) {
			return c
		}
	}
	return nil
}

// HasConversionWebhook reports whether the operator serves the
// conversions: the project has conversions and runs opgen's operator (it
// has controllers or admission webhooks, which the generated Setup
// registers, and with them the conversions). Its CRDs then convert
// through the operator's webhook server, which needs its Service,
// certificate and RBAC even when no admission webhook is declared. A
// project that runs no opgen operator (a kubebuilder project whose
// generation opgen took over) serves its conversions itself: its CRDs
// are controller-gen's, and its kustomize patches add the webhook.
// Only the conversions of ServedConversions count.
func (a *API) HasConversionWebhook() bool {
	return len(a.ServedConversions()) > 0 && (a.HasControllers() || len(a.Webhooks()) > 0)
}

// ServedConversions are the conversions the operator's webhook serves
// when it serves any (HasConversionWebhook): all of them, but in a
// project adopted from kubebuilder (Options.ProjectServesConversions) the
// kinds that convert themselves as controller-runtime asks (Convertible),
// which the project's controller-runtime webhook server keeps serving.
func (a *API) ServedConversions() []*Conversion {
	if !a.projectServesConversions {
		return a.Conversions
	}
	return slices.DeleteFunc(slices.Clone(a.Conversions), func(c *Conversion) bool { return c.Convertible })
}

// markConversionWebhooks sets Kind.ConversionWebhook on every version of
// the kinds the operator converts.
func (a *API) markConversionWebhooks() {
	if !a.HasConversionWebhook() {
		return
	}
	for _, c := range a.ServedConversions() {
		c.Hub.ConversionWebhook = true
		for _, k := range c.Spokes {
			k.ConversionWebhook = true
		}
	}
}

// HasVersionedKinds reports whether a kind of the API is declared in
// several versions of its group: a conversion may be needed. It reads only
// the markers, so it can be asked before the type-check.
func (a *API) HasVersionedKinds() bool { return len(families(a)) > 0 }

// family is one kind of a group in every version that declares it.
type family struct {
	group *Group
	name  string
	kinds []*Kind // oldest version first
}

// families returns the kinds declared in several versions of a group.
func families(api *API) []*family {
	var out []*family
	for _, g := range api.Groups {
		byName := map[string]*family{}
		var names []string
		for _, v := range g.Versions {
			for _, k := range v.Kinds {
				if k.Skipped || v.NoCRD {
					continue // not in a CRD: nothing converts to or from it
				}
				f := byName[k.Name]
				if f == nil {
					f = &family{group: g, name: k.Name}
					byName[k.Name] = f
					names = append(names, k.Name)
				}
				f.kinds = append(f.kinds, k)
			}
		}
		slices.Sort(names)
		for _, n := range names {
			f := byName[n]
			if len(f.kinds) < 2 {
				continue
			}
			slices.SortFunc(f.kinds, func(a, b *Kind) int {
				return version.CompareKubeAwareVersionStrings(b.Version.Name, a.Version.Name)
			})
			out = append(out, f)
		}
	}
	return out
}

// planConversions finds each kind's hub and the kinds whose served
// versions differ, reporting two hubs, and several served versions
// without a hub.
func (b *apiBuilder) planConversions(api *API) {
	fams := families(api)
	if len(fams) == 0 {
		return
	}
	schemas := b.versionSchemas(api, fams)
	for _, f := range fams {
		if c := b.planFamily(f, schemas[schema.GroupKind{Group: f.group.Name, Kind: f.name}]); c != nil {
			api.Conversions = append(api.Conversions, c)
		}
	}
}

func (b *apiBuilder) planFamily(f *family, schemas map[string]*apiextensionsv1.JSONSchemaProps) *Conversion {
	var hubs, served []*Kind
	var hubPos []token.Position
	for _, k := range f.kinds {
		if k.Storage {
			at, _ := b.docMarker(k.Pos, IsMarker("+kubebuilder:storageversion"))
			hubs = append(hubs, k)
			hubPos = append(hubPos, at)
		}
		if !k.Unserved {
			served = append(served, k)
		}
	}
	if len(hubs) > 1 {
		// controller-gen writes the CRD with two storage versions, which
		// the API server refuses: an error under --strict, else a warning
		// and controller-gen's CRD.
		to, also := b.in.Errors, ""
		if !b.in.Options.StrictConversion {
			to, also = b.in.Warnings, ", and the API server refuses its CRD, which marks both stored as controller-gen writes it (opgen generate --strict makes this an error)"
		}
		for i := 1; i < len(hubs); i++ {
			to.Add(hubPos[i], "%s has two hubs: +kubebuilder:storageversion in %s here and in %s (%s); the hub is the one version stored in etcd, which every other version converts to and from: keep the marker on one version%s", f.name, hubs[i].Version.Name, hubs[0].Version.Name, hubPos[0], also)
		}
		return nil
	}
	if len(served) < 2 && (len(hubs) == 0 || len(f.kinds) < 2) {
		return nil
	}
	differ := differing(served, schemas)
	if len(hubs) == 0 {
		why := "their schemas are identical, so the API server converts by itself, but it must know which version to store"
		if len(differ) > 0 {
			why = "their schemas differ (" + strings.Join(differ, ", ") + "), so the operator converts between them through the hub, the version every other converts to and from"
		}
		b.in.Errors.Add(served[0].Pos, "%s is served in %s and none is its hub: %s; mark the hub (usually the newest stable version) +kubebuilder:storageversion", f.name, versionNames(served), why)
		return nil
	}
	if len(differing(f.kinds, schemas)) == 0 {
		return nil
	}
	c := &Conversion{Hub: hubs[0]}
	for _, k := range slices.Backward(f.kinds) {
		if k != c.Hub {
			c.Spokes = append(c.Spokes, k)
		}
	}
	c.Convertible = convertible(c)
	if !c.Convertible && !b.in.Options.StrictConversion && !declaresConversion(b.in.Fset, c) {
		b.warnNoConversion(c, schemas)
		return nil
	}
	return c
}

// differing names the versions whose schema is not the first's.
func differing(kinds []*Kind, schemas map[string]*apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	if len(kinds) == 0 {
		return nil
	}
	first := schemas[kinds[0].Version.Name]
	for _, k := range kinds[1:] {
		if !equality.Semantic.DeepEqual(first, schemas[k.Version.Name]) {
			out = append(out, kinds[0].Version.Name+" and "+k.Version.Name)
		}
	}
	return out
}

func versionNames(kinds []*Kind) string {
	var names []string
	for _, k := range kinds {
		names = append(names, k.Version.Name)
	}
	return strings.Join(names, ", ")
}

// versionSchemas takes from the run's CRD parser (Context.CRDs) the
// schema of every version of each family's kind, without descriptions:
// two versions whose fields only read differently need no conversion.
func (b *apiBuilder) versionSchemas(api *API, fams []*family) map[schema.GroupKind]map[string]*apiextensionsv1.JSONSchemaProps {
	schemas := api.schemaSource()
	out := map[schema.GroupKind]map[string]*apiextensionsv1.JSONSchemaProps{}
	for _, f := range fams {
		gk := schema.GroupKind{Group: f.group.Name, Kind: f.name}
		crd, ok := schemas.crd(gk)
		dropStorageVersionErrors(f.kinds)
		if !ok {
			continue
		}
		byVersion := map[string]*apiextensionsv1.JSONSchemaProps{}
		for _, v := range crd.Spec.Versions {
			if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				s := v.Schema.OpenAPIV3Schema.DeepCopy()
				dropDescriptions(s)
				byVersion[v.Name] = s
			}
		}
		out[gk] = byVersion
	}
	return out
}

// dropStorageVersionErrors removes controller-tools' "CRD for ... has no
// storage version" from the kinds' packages: it has no position, and
// planFamily reports the same mistake at the kind.
func dropStorageVersionErrors(kinds []*Kind) {
	for _, k := range kinds {
		pkg := k.Version.Package
		pkg.Errors = slices.DeleteFunc(pkg.Errors, func(e packages.Error) bool {
			return strings.HasPrefix(e.Msg, "CRD for ") && strings.HasSuffix(e.Msg, " has no storage version")
		})
	}
}

// dropDescriptions clears every description of s, recursively.
func dropDescriptions(s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	s.Description = ""
	for k, p := range s.Properties {
		dropDescriptions(&p)
		s.Properties[k] = p
	}
	if s.Items != nil {
		dropDescriptions(s.Items.Schema)
		for i := range s.Items.JSONSchemas {
			dropDescriptions(&s.Items.JSONSchemas[i])
		}
	}
	if s.AdditionalProperties != nil {
		dropDescriptions(s.AdditionalProperties.Schema)
	}
	for _, list := range [][]apiextensionsv1.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			dropDescriptions(&list[i])
		}
	}
}

// ConversionStubFile is the spoke's file of hand-written conversions,
// which gen/conversion writes once with stubs.
const ConversionStubFile = "conversion.go"

// convertible reports whether c's kind converts itself the way
// controller-runtime's conversion package asks: the hub's type has a
// method Hub() and each spoke's type the methods ConvertTo and
// ConvertFrom, of one parameter each. The methods are found in the
// syntax, so the check needs no type information, nor a dependency on
// controller-runtime.
func convertible(c *Conversion) bool {
	if !hasMethod(c.Hub, "Hub", 0) {
		return false
	}
	for _, k := range c.Spokes {
		if !hasMethod(k, "ConvertTo", 1) || !hasMethod(k, "ConvertFrom", 1) {
			return false
		}
	}
	return true
}

// hasMethod reports whether k's type, or a pointer to it, declares a
// method called name with params parameters.
func hasMethod(k *Kind, name string, params int) bool {
	for _, f := range k.Version.Package.Syntax {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv != nil && fn.Name.Name == name && ReceiverName(fn) == k.Name && fn.Type.Params.NumFields() == params {
				return true
			}
		}
	}
	return false
}

// declaresConversion reports whether a spoke of c's kind holds conversion
// code of its own: a ConversionStubFile, or a function of
// code-generator's naming (Convert_<from>_<Type>_To_<to>_<Type>) outside
// the generated files.
func declaresConversion(fset *token.FileSet, c *Conversion) bool {
	for _, k := range c.Spokes {
		v := k.Version
		if _, err := os.Stat(filepath.Join(v.Dir, ConversionStubFile)); err == nil {
			return true
		}
		for _, f := range v.Package.Syntax {
			if strings.HasPrefix(filepath.Base(fset.Position(f.Package).Filename), "zz_generated") {
				continue
			}
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Convert_") {
					return true
				}
			}
		}
	}
	return false
}

// warnNoConversion says, for a kind whose versions differ and which the
// project converts in no way, what controller-gen's CRD (which opgen then
// writes: no conversion, so the API server only rewrites apiVersion)
// loses, field by field.
func (b *apiBuilder) warnNoConversion(c *Conversion, schemas map[string]*apiextensionsv1.JSONSchemaProps) {
	hub := schemas[c.Hub.Version.Name]
	var lost []string
	for _, k := range c.Spokes {
		onlySpoke, onlyHub, changed, rules := schemaDiff(schemas[k.Version.Name], hub)
		v, h := k.Version.Name, c.Hub.Version.Name
		if len(onlySpoke) > 0 {
			lost = append(lost, "only "+v+" has "+strings.Join(onlySpoke, ", ")+" (lost when "+v+" objects are stored as "+h+")")
		}
		if len(onlyHub) > 0 {
			lost = append(lost, "only "+h+" has "+strings.Join(onlyHub, ", ")+" (dropped when an object is read or written as "+v+")")
		}
		if len(changed) > 0 {
			lost = append(lost, v+" and "+h+" disagree on the type of "+strings.Join(changed, ", ")+" (an object of one may fail the other's validation)")
		}
		if len(rules) > 0 {
			lost = append(lost, v+" and "+h+" validate "+strings.Join(rules, ", ")+" differently (nothing is lost, but an object of one may fail the other's validation)")
		}
	}
	b.in.Warnings.Add(c.Hub.Pos, "%s is served in %s with different schemas, and the project converts nothing between them (no Hub, ConvertTo and ConvertFrom methods, no Convert_ functions, no %s): as controller-gen does, opgen writes its CRD without a conversion, so the API server only rewrites apiVersion: %s. Write the conversion (go tool opgen help migrating, \"Hand-written conversions\"), or run opgen generate with --strict to have opgen generate it and stub what it cannot", c.Hub.Name, versionNames(append([]*Kind{c.Hub}, c.Spokes...)), ConversionStubFile, strings.Join(lost, "; "))
}

// schemaDiff compares two schemas: the property paths only a has, only b
// has, those whose type or format differs, and those whose validation
// (enum, bounds, pattern, default, rules) differs. Paths are in JSON, from
// the object's root (spec.schedule; "" for the root).
func schemaDiff(a, b *apiextensionsv1.JSONSchemaProps) (onlyA, onlyB, changed, rules []string) {
	var walk func(path string, a, b *apiextensionsv1.JSONSchemaProps)
	walk = func(path string, a, b *apiextensionsv1.JSONSchemaProps) {
		if a == nil || b == nil {
			return
		}
		if a.Type != b.Type || a.Format != b.Format {
			changed = append(changed, pathName(path))
			return
		}
		if !equality.Semantic.DeepEqual(validation(a), validation(b)) {
			rules = append(rules, pathName(path))
		}
		for _, name := range propertyNames(a, b) {
			pa, inA := a.Properties[name]
			pb, inB := b.Properties[name]
			p := strings.TrimPrefix(path+"."+name, ".")
			switch {
			case !inB:
				onlyA = append(onlyA, p)
			case !inA:
				onlyB = append(onlyB, p)
			default:
				walk(p, &pa, &pb)
			}
		}
		if a.Items != nil && b.Items != nil {
			walk(path+"[]", a.Items.Schema, b.Items.Schema)
		}
		if a.AdditionalProperties != nil && b.AdditionalProperties != nil {
			walk(path+"[*]", a.AdditionalProperties.Schema, b.AdditionalProperties.Schema)
		}
	}
	walk("", a, b)
	return onlyA, onlyB, changed, rules
}

// validation is a schema without what schemaDiff compares on its own: its
// children, type, format and description.
func validation(s *apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
	v := *s
	v.Properties, v.Items, v.AdditionalProperties = nil, nil, nil
	v.Type, v.Format, v.Description = "", "", ""
	return v
}

func pathName(path string) string {
	if path == "" {
		return "the object"
	}
	return path
}

// propertyNames are the names of the properties of a and b, sorted, each
// once.
func propertyNames(a, b *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	for n := range a.Properties {
		out = append(out, n)
	}
	for n := range b.Properties {
		out = append(out, n)
	}
	sort.Strings(out)
	return slices.Compact(out)
}
