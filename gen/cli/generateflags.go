package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/generators"
)

// GenerateFlags are opgen generate's flags, bound to its options: the
// command parses them, and so do the tests that run opgen with a
// project's own flags.
type GenerateFlags struct {
	opts        GenerateOptions
	set         *pflag.FlagSet
	descLen     int
	strict      bool
	crdVersions []string
	k8sTags     bool
	headerYAML  bool
}

// Register adds the flags to f.
func (g *GenerateFlags) Register(f *pflag.FlagSet) {
	g.set = f
	f.StringVarP(&g.opts.Dir, "dir", "C", ".", "project root: patterns and outputs are relative to it")
	f.StringVar(&g.opts.Name, "name", "", "name of the operator, for its roles, field manager and finalizers (default: the last element of the project's import path, from go.mod)")
	f.StringVar(&g.opts.ClientDir, "client-dir", gen.DefaultClientDir, "directory of the clientset, listers, informers and apply configurations")
	f.StringVar(&g.opts.ControllerDir, "controller-dir", gen.DefaultControllerDir, "package of the controller glue and stubs")
	f.StringVar(&g.opts.CRDDir, "crd-dir", gen.DefaultCRDDir, "directory of the CRD manifests (default "+KubebuilderCRDDir+" with --layout kubebuilder)")
	f.StringVar(&g.opts.Layout, "layout", "opgen", "the project's layout: opgen, or kubebuilder for a project adopted from kubebuilder (opgen adopt): CRDs in "+KubebuilderCRDDir+", the ClusterRole manager-role as controller-gen writes it, the webhook configurations of +kubebuilder:webhook markers")
	f.StringVar(&g.opts.RBACDir, "rbac-dir", gen.DefaultRBACDir, "directory of the RBAC manifests")
	f.StringVar(&g.opts.ReleasedDir, "released-dir", gen.DefaultReleasedDir, "directory of the CRDs of the last release (written by opgen release), which the compatibility gate compares the generated CRDs with")
	f.StringVar(&g.opts.BaselineRef, "baseline-ref", "", "compare the generated CRDs with those of --crd-dir at this git commit, tag or branch instead of --released-dir's")
	f.BoolVar(&g.opts.Force, "force", false, "generate even when nothing changed since the last run")
	f.BoolVar(&g.opts.AllowDangerousTypes, "allow-dangerous-types", false, "allow float32 and float64 fields in API types (clients in other languages may round them differently)")
	f.BoolVar(&g.opts.StrictMarkers, "strict-markers", false, "fail on a +kubebuilder: marker that controller-tools does not know (it ignores it, and opgen warns by default)")
	f.BoolVar(&g.strict, "strict", false, "refuse what controller-gen accepts but a new project should not have: --strict-markers, a float in a CRD without --allow-dangerous-types, and a kind whose versions differ converted by opgen (stubbing what it cannot convert) rather than left without a conversion; projects opgen init creates pass it")
	f.IntVar(&g.descLen, "crd-max-desc-len", 0, "cap every description in the CRD schemas at this many characters, cut at a sentence end, as controller-gen's crd:maxDescLen (0 drops them); default: no cap")
	f.StringSliceVar(&g.crdVersions, "crd-versions", []string{"v1"}, "the apiextensions versions of the CRDs: v1 only (controller-gen's crd:crdVersions=v1)")
	f.StringSliceVar(&g.opts.CRDPackages, "crd-packages", nil, "package patterns of the API packages that get CRDs, relative to the project root, like the paths of a project's controller-gen crd call (default: all)")
	f.BoolVar(&g.opts.GenerateEmbeddedObjectMeta, "generate-embedded-object-meta", false, "give the metadata of embedded objects (pod templates) its properties in the CRD schemas, so that the API server keeps their labels and annotations (controller-gen's crd:generateEmbeddedObjectMeta=true)")
	f.BoolVar(&g.k8sTags, "k8s-tags", true, "read Kubernetes' +k8s: validation tags into the CRDs (docs/generate.md); with --layout kubebuilder the default is false, so that the CRDs are controller-gen's")
	f.BoolVar(&g.opts.IgnoreUnexportedFields, "ignore-unexported-fields", false, "leave unexported fields out of the CRD schemas (controller-gen's crd:ignoreUnexportedFields=true)")
	f.StringVar(&g.opts.HeaderFile, "header-file", "", "a file of licence text (a Go comment, like hack/boilerplate.go.txt) to head every generated file; YAML gets it as # comments (controller-gen's headerFile, code-generator's --go-header-file)")
	f.BoolVar(&g.headerYAML, "header-yaml", true, "head the YAML files too with --header-file, as # comments; with --layout kubebuilder the default is false, as kubebuilder's Makefile gives controller-gen's headerFile to its object generator only")
	f.StringVar(&g.opts.HeaderYear, "header-year", "", "the year to put for \" YEAR\" in the header file (controller-gen's year option)")
	f.StringVar(&g.opts.Clients.Kinds, "clients", "", "which kinds get typed clients: all (every kind with a list type; the default, or, with --layout kubebuilder, when the project has opgen controllers), genclient (only the types tagged +genclient, with their tags as written, in every package with a +genclient line: code-generator's client-gen), none")
	f.StringSliceVar(&g.opts.Clients.Packages, "client-packages", nil, "package patterns of the API packages that get clients, relative to the project root (default: all; kube_codegen.sh's --one-input-api)")
	f.StringSliceVar(&g.opts.Clients.Trees, "client-trees", nil, "the client trees to write: "+strings.Join(gen.AllClientTrees, ", ")+" (default: all; kube_codegen.sh writes the clientset, the listers and informers with --with-watch, the apply configurations with --with-applyconfig)")
	f.StringVar(&g.opts.Clients.ClientsetDir, "clientset-dir", "", "directory of the clientset (default <client-dir>/clientset)")
	f.StringVar(&g.opts.Clients.ListersDir, "listers-dir", "", "directory of the listers (default <client-dir>/listers)")
	f.StringVar(&g.opts.Clients.InformersDir, "informers-dir", "", "directory of the informers (default <client-dir>/informers)")
	f.StringVar(&g.opts.Clients.ApplyConfigDir, "applyconfig-dir", "", "directory of the apply configurations (default <client-dir>/applyconfiguration)")
	f.StringVar(&g.opts.Clients.VersionedName, "versioned-name", "", "the clientset's package name (default versioned; kube_codegen.sh's --versioned-name)")
	f.StringSliceVar(&g.opts.Clients.ApplyConfigExternals, "applyconfig-externals", nil, "apply configurations of other modules' types, as <package>.<Type>:<apply configuration package>, comma-separated (applyconfiguration-gen's --external-applyconfigurations)")
	f.StringVar(&g.opts.Clients.ApplyConfigOpenAPISchema, "applyconfig-openapi-schema", "", "a file of the types' OpenAPI schema, for the apply configurations' Extract functions (applyconfiguration-gen's --openapi-schema)")
	f.StringSliceVar(&g.opts.Clients.PluralExceptions, "plural-exceptions", nil, "plurals of the clients' names, as <Type>:<Plural>, comma-separated (client-gen's --plural-exceptions)")
	f.BoolVar(&g.opts.Clients.PrefersProtobuf, "prefers-protobuf", false, "make the clientset ask for protobuf (client-gen's --prefers-protobuf)")
	f.StringSliceVar(&g.opts.ConversionExtraPeerDirs, "conversion-extra-peer-dirs", nil, "import paths of more packages where the conversion generator looks for hand-written Convert_ functions (conversion-gen's --extra-peer-dirs)")
	f.StringSliceVar(&g.opts.ConversionPackages, "conversion-packages", nil, "package patterns of the only packages whose +k8s:conversion-gen tags are followed, relative to the project root, like the package arguments of a project's conversion-gen call (default: every tagged package of the run)")
	f.StringSliceVar(&g.opts.DefaulterPackages, "defaulter-packages", nil, "package patterns of the only packages whose +k8s:defaulter-gen tags are followed, relative to the project root, like the package arguments of a project's defaulter-gen call (default: every tagged package of the run)")
	f.StringSliceVar(&g.opts.DefaulterExtraPeerDirs, "defaulter-extra-peer-dirs", nil, "import paths of more packages where the defaulter generator looks for SetDefaults_ functions (defaulter-gen's --extra-peer-dirs)")
	f.StringSliceVar(&g.opts.Only, "only", nil, "run only these generators: "+strings.Join(generators.Names(), ", "))
	f.BoolVarP(&g.opts.Verbose, "verbose", "v", false, "list every file written and the time taken")
	f.BoolVar(&g.opts.Timings, "timings", false, "print the time and allocation of the load, the type-check and each generator (run one after another), and the peak RSS")
}

// Options returns the options the parsed flags give.
func (g *GenerateFlags) Options() (GenerateOptions, error) {
	opts := g.opts
	if g.strict {
		opts.StrictMarkers, opts.StrictConversion, opts.StrictTypes = true, true, true
	}
	switch {
	case g.set.Changed("k8s-tags"):
		opts.IgnoreK8sTags = !g.k8sTags
	case opts.Layout == "kubebuilder":
		opts.IgnoreK8sTags = true
	}
	switch {
	case g.set.Changed("header-yaml"):
		opts.HeaderGoOnly = !g.headerYAML
	case opts.Layout == "kubebuilder":
		opts.HeaderGoOnly = true
	}
	if !g.set.Changed("crd-dir") {
		opts.CRDDir = "" // the layout's default
	}
	if g.set.Changed("crd-max-desc-len") {
		descLen := g.descLen
		opts.CRDMaxDescLen = &descLen
	}
	if len(g.crdVersions) != 1 || g.crdVersions[0] != "v1" {
		return opts, fmt.Errorf("--crd-versions %s: CRDs are written in apiextensions.k8s.io/v1, the only version Kubernetes serves (controller-gen's crd:crdVersions=v1); drop the flag", strings.Join(g.crdVersions, ","))
	}
	return opts, nil
}
