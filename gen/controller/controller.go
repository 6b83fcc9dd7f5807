// Package controller generates the typed glue between the project's
// controllers and opgen's runtime: zz_generated.controllers.go in the
// controller package (default internal/controller), for every kind marked
// +opgen:controller and every handler type of a built-in kind marked
// +opgen:controller:for.
//
// For a kind Widget the glue declares
//
//   - WidgetKind(op): the runtime.Kind, built from the generated clientset
//     (its ListWatch lists and watches, and its Client gets and patches,
//     through the clientset's REST client, with the runtime's one-pass
//     JSON decoding; the list-watch lets the runtime report relists);
//   - WidgetOptions(): the runtime.ControllerOptions the markers declare
//     (owned kinds, watches with their mapping functions, reconcile period,
//     workers);
//   - WidgetReaders and NewWidgetReaders(op), when the kind reads or owns
//     built-in kinds: one method per kind returning a typed cached
//     *runtime.Reader (see readers);
//   - SetupWidget(op, h): registers h; when h implements
//     runtime.Configurer, runtime.Register lets its Configure method adjust
//     the options first;
//   - a compile-time check that *WidgetController implements
//     plug.Handler[*v1.Widget].
//
// For a handler type PodPrinter of a built-in kind (+opgen:controller:for=v1.Pod),
// which the user writes (no stub is scaffolded), it declares
//
//   - PodPrinterOptions(): the options its markers declare; when the
//     handler has Delete, a finalizer of its own (see Finalizer);
//   - SetupPodPrinter(op, h): registers h on the Kind of package builtin
//     (builtin.Pods), narrowed by +opgen:controller:labelSelector;
//   - a compile-time check that *PodPrinter implements
//     plug.Handler[*corev1.Pod] and, when it has Delete, plug.Deleter: the
//     generated RBAC grants the finalizer's patch because of that method.
//
// Setup(op) registers every controller, with the handler that
// NewWidgetController(op) returns (the controller package must declare it:
// a kind whose handler type exists without it is a generation error that
// names the function to write), and for a handler type of a built-in kind
// the one NewPodPrinter(op) returns, or its zero value when there is no
// such function.
//
// A kind with +opgen:controller in several versions, each with the same
// +opgen:controller:dispatch, gets this glue once per version: the oldest
// version's under the kind's names, the others' with the version added
// (ShapeV2Kind, ShapeV2Options, SetupShapeV2, NewShapeV2Controller), and
// every version's options carry the same runtime.VersionDispatch, so that
// each object is handled by one of them (see versions.go). The kinds share one generated clientset, the built-in
// kinds use the operator's. Everything generic lives in pkg/runtime; the
// glue only names concrete types.
package controller

import (
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/dave/jennifer/jen"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/markers"
)

// FileName is the glue file in the controller package.
const FileName = "zz_generated.controllers.go"

const (
	runtimePkg = "github.com/opgen-sdk/opgen/pkg/runtime"
	builtinPkg = "github.com/opgen-sdk/opgen/pkg/runtime/builtin"
	plugPkg    = "github.com/opgen-sdk/opgen/pkg/plug"
	cachePkg   = "k8s.io/client-go/tools/cache"
	schemaPkg  = "k8s.io/apimachinery/pkg/runtime/schema"
)

// Generator writes the controller glue, from the +opgen: markers of the
// API model.
type Generator struct{ gen.NoMarkers }

var _ gen.Generator = Generator{}

// requiresOpgen reports whether the module can build the glue of the
// controllers and webhooks, which imports opgen's runtime; when it cannot,
// it says how to make it.
func requiresOpgen(ctx *gen.Context, kinds []*model.Kind) bool {
	if ctx.Project.UsesOpgen {
		return true
	}
	pos, what := token.Position{}, ""
	switch {
	case len(kinds) > 0:
		pos, what = kinds[0].Pos, kinds[0].Name+" has +opgen:controller"
	case len(ctx.API.BuiltinControllers) > 0:
		pos, what = ctx.API.BuiltinControllers[0].Pos, ctx.API.BuiltinControllers[0].Name+" has +opgen:controller:for"
	case len(ctx.API.Webhooks()) > 0:
		pos, what = ctx.API.Webhooks()[0].Pos, ctx.API.Webhooks()[0].Name+" has +opgen:webhook"
	default:
		return true
	}
	ctx.Errors.Add(pos, "%s, whose generated glue imports opgen's runtime, but the module's go.mod does not require %s, so the glue would not build: run opgen adopt in the project, which adds opgen to go.mod, or add the require (and, while opgen is not on the module proxy, a replace with the path of your clone) to go.mod yourself", what, gen.OpgenModule)
	return false
}

// Generate writes the glue when there is at least one controller. With
// none, it writes a Setup that registers nothing when the controller package
// exists (a project fresh from opgen init, whose main calls Setup), and
// removes a stale glue file otherwise.
func (Generator) Generate(ctx *gen.Context) error {
	dir := ctx.Project.Abs(ctx.Project.ControllerDir)
	path := filepath.Join(dir, FileName)
	ctx.Output.Own(path)
	kinds := ctx.API.Controllers()
	if clashes(ctx, kinds, ctx.API.BuiltinControllers) || !checkDispatch(ctx, kinds) || !requiresOpgen(ctx, kinds) {
		return nil
	}
	ctors, ok := checkFuncs(ctx, kinds, ctx.API.BuiltinControllers)
	webhooks := ctx.API.Webhooks()
	webhookCtors, webhooksOK := checkWebhooks(ctx, webhooks)
	if !ok || !webhooksOK {
		return nil
	}
	for name := range webhookCtors {
		ctors[name] = true
	}
	if ctx.API.HasConversionWebhook() {
		// Declared by gen/conversion's glue in the same package.
		ctors[conversionSetup] = true
	}
	switch {
	case ctx.API.HasControllers() || len(webhooks) > 0:
		ctx.Output.Jen(path, File(ctx.Project, kinds, ctx.API.BuiltinControllers, webhooks, ctors))
	case hasOwnGoFiles(dir):
		ctx.Output.Jen(path, EmptyFile(ctx.Project))
	}
	return nil
}

// hasOwnGoFiles reports whether dir holds Go files other than the glue.
func hasOwnGoFiles(dir string) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") && e.Name() != FileName {
			return true
		}
	}
	return false
}

// EmptyFile is the glue of a controller package without kinds yet.
func EmptyFile(p *gen.Project) *jen.File {
	f := jen.NewFilePathName(p.ImportPath(p.ControllerDir), PackageName(p))
	f.ImportName(runtimePkg, "runtime")
	f.Comment("Setup registers a controller for every kind marked +opgen:controller.")
	f.Comment("There is none yet: add one with")
	f.Comment("")
	f.Comment("\topgen create api --group <group> --version <version> --kind <Kind>")
	f.Comment("")
	f.Comment("and run go generate ./... again.")
	f.Func().Id("Setup").Params(jen.Id("op").Op("*").Qual(runtimePkg, "Operator")).Error().Block(jen.Return(jen.Nil()))
	return f
}

// PackageName is the Go package name of the controller directory.
func PackageName(p *gen.Project) string {
	return strings.ReplaceAll(filepath.Base(p.Abs(p.ControllerDir)), "-", "")
}

// HandlerName is the name of the handler type of kind.
func HandlerName(k *model.Kind) string { return GlueName(k) + "Controller" }

// File returns the glue for kinds, handlers and the kinds with admission
// webhooks. Every kind's handler is built by its New<Kind>Controller(op);
// a handler type of a built-in kind, and a webhook type, by New<Type>(op)
// when ctors holds its name, or as its zero value.
func File(p *gen.Project, kinds []*model.Kind, handlers []*model.BuiltinController, webhooks []*model.Kind, ctors map[string]bool) *jen.File {
	f := jen.NewFilePathName(p.ImportPath(p.ControllerDir), PackageName(p))
	f.ImportName(runtimePkg, "runtime")
	f.ImportName(builtinPkg, "builtin")
	f.ImportAlias(p.ClientsetPackage(), "versioned")
	for _, k := range kinds {
		f.ImportAlias(k.Version.ImportPath, k.Version.Alias())
	}
	for _, k := range webhooks {
		f.ImportAlias(k.Version.ImportPath, k.Version.Alias())
	}
	for _, h := range handlers {
		f.ImportAlias(h.Kind.Package, h.Alias())
	}
	writeSetup(f, p, kinds, handlers, webhooks, ctors)
	for _, k := range kinds {
		g := glue{p: p, k: k}
		g.checks(f)
		g.kind(f)
		g.options(f)
		g.projection(f)
		g.setup(f)
		readers(f, GlueName(k), k.Controller)
	}
	for _, h := range handlers {
		hg := handlerGlue{p: p, h: h}
		hg.checks(f)
		hg.options(f)
		hg.setup(f)
		readers(f, h.Name, h.Controller)
	}
	for _, k := range webhooks {
		wg := webhookGlue{p: p, k: k, ctor: ctors[WebhookName(k)]}
		wg.checks(f)
		if k.Controller == nil {
			glue{p: p, k: k}.kindNamed(f, kindFuncName(k))
		}
		wg.setup(f)
	}
	return f
}

// conversionSetup is the function gen/conversion's glue declares in the
// controller package (conversion.SetupFunc): Setup calls it when a kind
// converts between its versions.
const conversionSetup = "setupConversions"

func writeSetup(f *jen.File, p *gen.Project, kinds []*model.Kind, handlers []*model.BuiltinController, webhooks []*model.Kind, ctors map[string]bool) {
	var calls, body []jen.Code
	for _, k := range kinds {
		calls = append(calls, jen.Id("setup"+GlueName(k)).Call(jen.Id("op"), jen.Id("cs"), jen.Id(ConstructorName(k)).Call(jen.Id("op"))))
	}
	for _, k := range webhooks {
		wg := webhookGlue{p: p, k: k, ctor: ctors[WebhookName(k)]}
		calls = append(calls, jen.Id("setup"+WebhookName(k)).Call(jen.Id("op"), jen.Id("cs"), wg.handler()))
	}
	for _, h := range handlers {
		handler := jen.Op("&").Id(h.Name).Values()
		if ctors[h.Name] {
			handler = jen.Id("New" + h.Name).Call(jen.Id("op"))
		}
		calls = append(calls, jen.Id("Setup"+h.Name).Call(jen.Id("op"), handler))
	}
	if ctors[conversionSetup] {
		calls = append(calls, jen.Id(conversionSetup).Call(jen.Id("op")))
	}
	f.Comment("Setup registers a controller for every kind marked +opgen:controller, with")
	f.Comment("the handler its New<Kind>Controller(op) returns, and for every handler")
	f.Comment("type marked +opgen:controller:for, built by New<Type>(op) when the package")
	f.Comment("declares it and as its zero value otherwise. main calls it; a kind added")
	f.Comment("with opgen create api is registered here once go generate ran.")
	if len(webhooks) > 0 {
		f.Comment("")
		f.Comment("It registers the admission webhooks of every kind marked +opgen:webhook")
		f.Comment("too, built by New<Kind>Webhook(op) or as the zero <Kind>Webhook.")
	}
	if len(kinds) > 0 || len(webhooks) > 0 {
		body = append(body,
			jen.List(jen.Id("cs"), jen.Err()).Op(":=").Id("newClientset").Call(jen.Id("op")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		)
	}
	body = append(body, jen.Return(jen.Qual("errors", "Join").Custom(multiline("(", ")"), calls...)))
	f.Func().Id("Setup").Params(jen.Id("op").Op("*").Qual(runtimePkg, "Operator")).Error().Block(body...)
	if len(kinds) == 0 && len(webhooks) == 0 {
		return // no generated clientset to make
	}
	f.Line()
	f.Comment("newClientset returns the generated clientset on the operator's config and")
	f.Comment("shared HTTP client.")
	f.Func().Id("newClientset").Params(jen.Id("op").Op("*").Qual(runtimePkg, "Operator")).Params(jen.Qual(p.ClientsetPackage(), "Interface"), jen.Error()).Block(
		jen.List(jen.Id("cs"), jen.Err()).Op(":=").Qual(p.ClientsetPackage(), "NewForConfigAndClient").Call(
			jen.Id("op").Dot("RESTConfig").Call(), jen.Id("op").Dot("HTTPClient").Call()),
		jen.If(jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit("create the generated clientset: %w"), jen.Err())),
		),
		jen.Return(jen.Id("cs"), jen.Nil()),
	)
}

// glue writes the declarations of one kind.
type glue struct {
	p *gen.Project
	k *model.Kind
}

func (g glue) obj() *jen.Statement { return jen.Op("*").Qual(g.k.Version.ImportPath, g.k.Name) }

func (g glue) checks(f *jen.File) {
	f.Line()
	f.Commentf("%s must implement the typed handler of %s.", HandlerName(g.k), g.k.Name)
	f.Var().Id("_").Qual(plugPkg, "Handler").Types(g.obj()).Op("=").Parens(jen.Op("*").Id(HandlerName(g.k))).Parens(jen.Nil())
}

func (g glue) kind(f *jen.File) { g.kindNamed(f, GlueName(g.k)) }

// kindNamed writes <name>Kind(op) and <name>Kind(cs), which describe the
// kind to the runtime.
func (g glue) kindNamed(f *jen.File, name string) {
	k := g.k
	kindType := jen.Qual(runtimePkg, "Kind").Types(g.obj())
	f.Line()
	f.Commentf("%sKind describes %s %s to the runtime: it is watched and", name, k.Version.GroupVersion(), k.Name)
	f.Comment("written through the generated clientset.")
	f.Func().Id(name+"Kind").Params(jen.Id("op").Op("*").Qual(runtimePkg, "Operator")).Params(kindType.Clone(), jen.Error()).Block(
		jen.List(jen.Id("cs"), jen.Err()).Op(":=").Id("newClientset").Call(jen.Id("op")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(kindType.Clone().Values(), jen.Err())),
		jen.Return(jen.Id(lowerFirst(name)+"Kind").Call(jen.Id("cs")), jen.Nil()),
	)
	f.Line()
	namespace := jen.Id("namespace")
	if !k.Namespaced {
		namespace = jen.Lit("")
	}
	restClient := jen.Id("cs").Dot(k.Version.ClientGroup()).Call().Dot("RESTClient").Call()
	f.Func().Id(lowerFirst(name) + "Kind").Params(jen.Id("cs").Qual(g.p.ClientsetPackage(), "Interface")).Add(kindType.Clone()).Block(
		jen.Return(kindType.Clone().Add(fields(true,
			"GVK", jen.Qual(k.Version.ImportPath, "SchemeGroupVersion").Dot("WithKind").Call(jen.Lit(k.Name)),
			"Resource", jen.Lit(k.Plural),
			"Namespaced", jen.Lit(k.Namespaced),
			"ListWatch", jen.Func().Params(jen.Id("namespace").String()).Op("*").Qual(cachePkg, "ListWatch").Block(
				jen.Return(jen.Qual(runtimePkg, "ListWatch").Types(g.obj()).Call(restClient, jen.Lit(k.Plural), jen.Id("namespace"))),
			),
			"Client", jen.Func().Params(jen.Id("namespace").String()).Qual(plugPkg, "Client").Types(g.obj()).Block(
				jen.Return(jen.Qual(runtimePkg, "Client").Types(g.obj()).Call(restClient.Clone(), jen.Lit(k.Plural), namespace)),
			),
		))),
	)
}

func (g glue) options(f *jen.File) {
	k, name := g.k, GlueName(g.k)
	opts := optionFields(name, k.Controller)
	if d := dispatch(k); d != nil {
		opts = append(opts, "VersionDispatch", d)
	}
	if k.Projection != nil {
		paths := make([]jen.Code, len(k.Controller.CacheSpec))
		for i, p := range k.Controller.CacheSpec {
			paths[i] = jen.Lit(p)
		}
		opts = append(opts, "Project", jen.Id("project"+name), "CacheSpec", jen.Index().String().Values(paths...))
	}
	f.Line()
	f.Commentf("%sOptions returns the controller options that the +opgen:controller", name)
	f.Commentf("markers of %s declare.", describe(k))
	f.Func().Id(name+"Options").Params().Qual(runtimePkg, "ControllerOptions").Types(g.obj()).Block(
		jen.Return(jen.Qual(runtimePkg, "ControllerOptions").Types(g.obj()).Add(fields(true, opts...))),
	)
}

// optionFields are the fields of the ControllerOptions literal of the
// controller named name that spec describes.
func optionFields(name string, spec *markers.ControllerSpec) []any {
	opts := []any{"Name", jen.Lit(strings.ToLower(name))}
	if len(spec.Owns) > 0 {
		var owns []jen.Code
		for _, gvk := range spec.Owns {
			owns = append(owns, gvkFields(gvk))
		}
		opts = append(opts, "Owns", jen.Index().Qual(schemaPkg, "GroupVersionKind").Custom(multiline("{", "}"), owns...))
	}
	if len(spec.Retain) > 0 {
		var retain []jen.Code
		for _, gvk := range spec.Retain {
			retain = append(retain, gvkFields(gvk))
		}
		opts = append(opts, "Retain", jen.Index().Qual(schemaPkg, "GroupVersionKind").Custom(multiline("{", "}"), retain...))
	}
	if len(spec.Watches) > 0 {
		var watches []jen.Code
		for _, w := range spec.Watches {
			watches = append(watches, fields(false, "Kind", gvkLit(w.Kind), "Map", jen.Id(w.Map)))
		}
		opts = append(opts, "Watches", jen.Index().Qual(runtimePkg, "Watch").Custom(multiline("{", "}"), watches...))
	}
	if spec.ReconcileEvery > 0 {
		opts = append(opts, "ReconcileEvery", duration(spec.ReconcileEvery))
	}
	if spec.Workers > 0 {
		opts = append(opts, "Workers", jen.Lit(spec.Workers))
	}
	return opts
}

func (g glue) setup(f *jen.File) {
	name := GlueName(g.k)
	handler := jen.Id("h").Op("*").Id(HandlerName(g.k))
	f.Line()
	f.Commentf("Setup%s registers h as the controller of %s. When h implements", name, describe(g.k))
	f.Comment("runtime.Configurer, its Configure method adjusts the options first.")
	f.Func().Id("Setup"+name).Params(jen.Id("op").Op("*").Qual(runtimePkg, "Operator"), handler.Clone()).Error().Block(
		jen.List(jen.Id("cs"), jen.Err()).Op(":=").Id("newClientset").Call(jen.Id("op")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Return(jen.Id("setup"+name).Call(jen.Id("op"), jen.Id("cs"), jen.Id("h"))),
	)
	f.Line()
	f.Func().Id("setup"+name).Params(
		jen.Id("op").Op("*").Qual(runtimePkg, "Operator"),
		jen.Id("cs").Qual(g.p.ClientsetPackage(), "Interface"),
		handler.Clone(),
	).Error().Block(register(name, jen.Id(lowerFirst(name)+"Kind").Call(jen.Id("cs")))...)
}

// register is the body that registers h on kind with the options of name
// (runtime.Register calls a Configurer's Configure).
func register(name string, kind jen.Code) []jen.Code {
	return []jen.Code{
		jen.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Qual(runtimePkg, "Register").Call(jen.Id("op"), kind, jen.Id("h"), jen.Id(name+"Options").Call()), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("register the %s controller: %%w", name)), jen.Err())),
		),
		jen.Return(jen.Nil()),
	}
}

// gvkFields writes the fields of a schema.GroupVersionKind literal.
func gvkFields(gvk schema.GroupVersionKind) *jen.Statement {
	var kv []any
	if gvk.Group != "" {
		kv = append(kv, "Group", jen.Lit(gvk.Group))
	}
	return fields(false, append(kv, "Version", jen.Lit(gvk.Version), "Kind", jen.Lit(gvk.Kind))...)
}

// gvkLit writes a schema.GroupVersionKind literal.
func gvkLit(gvk schema.GroupVersionKind) *jen.Statement {
	return jen.Qual(schemaPkg, "GroupVersionKind").Add(gvkFields(gvk))
}

// fields writes a composite literal's fields in the order given (jennifer's
// Dict sorts them), as name, value pairs.
func fields(multi bool, kv ...any) *jen.Statement {
	items := make([]jen.Code, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		items = append(items, jen.Id(kv[i].(string)).Op(":").Add(kv[i+1].(jen.Code)))
	}
	if multi {
		return jen.Custom(multiline("{", "}"), items...)
	}
	return jen.Custom(jen.Options{Open: "{", Close: "}", Separator: ","}, items...)
}

func multiline(open, close string) jen.Options {
	return jen.Options{Open: open, Close: close, Separator: ",", Multi: true}
}

// duration writes d as a readable expression (5 * time.Minute).
func duration(d time.Duration) jen.Code {
	units := []struct {
		name string
		d    time.Duration
	}{{"Hour", time.Hour}, {"Minute", time.Minute}, {"Second", time.Second}, {"Millisecond", time.Millisecond}}
	for _, u := range units {
		if d%u.d == 0 {
			return jen.Lit(int(d/u.d)).Op("*").Qual("time", u.name)
		}
	}
	return jen.Qual("time", "Duration").Call(jen.Lit(int64(d)))
}

func lowerFirst(s string) string {
	i := 0
	for i < len(s) && s[i] >= 'A' && s[i] <= 'Z' {
		i++
	}
	switch {
	case i == 0:
		return s
	case i == 1 || i == len(s):
		return strings.ToLower(s[:i]) + s[i:]
	default: // an initialism: HTTPRoute -> httpRoute
		return strings.ToLower(s[:i-1]) + s[i-1:]
	}
}
