package gen

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ClientOptions configure the typed clients as code-generator's
// kube_codegen.sh gen_client does. The zero value writes opgen's default:
// all four trees under ClientDir for every kind with a list type.
type ClientOptions struct {
	// Kinds selects the kinds that get clients: ClientsAll (every kind
	// with a list type, or the +genclient kinds of a package that tags
	// some), ClientsGenclient (the types tagged +genclient, and every group
	// version with a +genclient line, as client-gen selects them) or
	// ClientsNone. Empty is ClientsAll, except in the kubebuilder layout,
	// where it is ClientsAll when the project has opgen controllers and
	// ClientsNone otherwise.
	Kinds string
	// Packages, when set, are the package patterns (relative to Root) of
	// the API packages that get clients; the others get none
	// (kube_codegen.sh's --one-input-api).
	Packages []string
	// Trees are the client trees written (ClientsetTree, ListersTree,
	// InformersTree, ApplyConfigTree); default all. kube_codegen.sh writes
	// the clientset, the listers and informers with --with-watch and the
	// apply configurations with --with-applyconfig.
	Trees []string
	// ClientsetDir, ListersDir, InformersDir and ApplyConfigDir place the
	// trees, relative to Root; defaults: clientset, listers, informers and
	// applyconfiguration under ClientDir.
	ClientsetDir, ListersDir, InformersDir, ApplyConfigDir string
	// VersionedName names the clientset's package (default versioned).
	VersionedName string
	// ApplyConfigExternals are the types of other modules whose apply
	// configurations exist already, as <package>.<Type>:<apply
	// configuration package> (applyconfiguration-gen's
	// --external-applyconfigurations): apply configurations of the
	// project's types use them rather than the types themselves.
	ApplyConfigExternals []string
	// ApplyConfigOpenAPISchema is a file of the OpenAPI schema of the
	// types, for the Extract functions of the apply configurations
	// (applyconfiguration-gen's --openapi-schema).
	ApplyConfigOpenAPISchema string
	// PluralExceptions are <Type>:<Plural> pairs for the clients' names
	// (client-gen's --plural-exceptions). In ClientsAll, each kind's
	// plural also follows its CRD's.
	PluralExceptions []string
	// PrefersProtobuf makes the clientset ask for protobuf
	// (client-gen's --prefers-protobuf).
	PrefersProtobuf bool
}

// Which kinds get clients (ClientOptions.Kinds).
const (
	ClientsAll       = "all"
	ClientsGenclient = "genclient"
	ClientsNone      = "none"
)

// The client trees (ClientOptions.Trees).
const (
	ClientsetTree   = "clientset"
	ListersTree     = "listers"
	InformersTree   = "informers"
	ApplyConfigTree = "applyconfiguration"
)

// AllClientTrees are the client trees, in the order they depend on each
// other.
var AllClientTrees = []string{ApplyConfigTree, ClientsetTree, ListersTree, InformersTree}

// check reports client options that cannot work together.
func (c ClientOptions) check() error {
	switch c.Kinds {
	case "", ClientsAll, ClientsGenclient, ClientsNone:
	default:
		return fmt.Errorf("clients %q: pick %s, %s or %s", c.Kinds, ClientsAll, ClientsGenclient, ClientsNone)
	}
	for _, t := range c.Trees {
		if !slices.Contains(AllClientTrees, t) {
			return fmt.Errorf("client tree %q: pick from %s", t, strings.Join(AllClientTrees, ", "))
		}
	}
	if c.writes(InformersTree) && (!c.writes(ListersTree) || !c.writes(ClientsetTree)) {
		return errors.New("the informers need the listers and the clientset: add them to the client trees")
	}
	if c.writes(ListersTree) && !c.writes(ClientsetTree) {
		return errors.New("the listers come with the clientset: add it to the client trees")
	}
	for _, e := range c.ApplyConfigExternals {
		if typ, pkg, ok := strings.Cut(e, ":"); !ok || !strings.Contains(typ, ".") || pkg == "" {
			return fmt.Errorf("apply configuration external %q: write <package>.<Type>:<apply configuration package>, like k8s.io/api/core/v1.PodTemplateSpec:k8s.io/client-go/applyconfigurations/core/v1", e)
		}
	}
	for _, e := range c.PluralExceptions {
		if typ, plural, ok := strings.Cut(e, ":"); !ok || typ == "" || plural == "" {
			return fmt.Errorf("plural exception %q: write <Type>:<Plural>, like Endpoints:Endpoints", e)
		}
	}
	return nil
}

// writes reports whether the options write a client tree.
func (c ClientOptions) writes(tree string) bool {
	return c.Kinds != ClientsNone && (len(c.Trees) == 0 || slices.Contains(c.Trees, tree))
}
