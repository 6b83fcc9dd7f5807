package controller

import (
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/dave/jennifer/jen"

	"github.com/opgen-sdk/opgen/gen"
)

// Admission webhooks
//
// A kind marked +opgen:webhook:validate or +opgen:webhook:default gets, in
// the glue, a compile-time check that its webhook type <Kind>Webhook (the
// user's, scaffolded once as <kind>_webhook.go) implements
// webhook.Validator and webhook.Defaulter of the kind, a
// Setup<Kind>Webhook(op, w) and a line in Setup that registers the type,
// built by New<Kind>Webhook(op) when the package declares it and as its
// zero value otherwise. A kind with webhooks but no controller gets the
// <Kind>Kind(op) function too, which the registration needs.

const webhookPkg = "github.com/opgen-sdk/opgen/pkg/webhook"

// WebhookName is the webhook type of k: <Kind>Webhook.
func WebhookName(k *model.Kind) string { return k.WebhookType() }

// WebhookFile is the file the webhook stub of k is scaffolded in.
func WebhookFile(k *model.Kind) string { return strings.ToLower(k.Name) + "_webhook.go" }

// webhookMethods are the methods each webhook marker asks for;
// ValidateDelete is optional (webhook.DeleteValidator).
var (
	validateMethods = []string{"ValidateCreate", "ValidateUpdate"}
	defaultMethods  = []string{"Default"}
)

// kindFuncName is the glue name of the <name>Kind function of k: its
// controller's, or, for a kind with webhooks only, the kind's name, with
// the version when another version of the kind has a controller.
func kindFuncName(k *model.Kind) string {
	if k.Controller != nil {
		return GlueName(k)
	}
	if s := siblings(k); s[0] != k {
		return VersionedName(k.Name, k.Version.Name)
	}
	return k.Name
}

// checkWebhooks reports what keeps the webhook glue of kinds from
// compiling or from running: no controller package to register them in, a
// webhook type without the methods its markers ask for, the stub file
// without the type, two versions of a kind with webhooks. It returns the
// webhook types that have a constructor New<Kind>Webhook, and false when
// it reported an error.
func checkWebhooks(ctx *gen.Context, kinds []*model.Kind) (map[string]bool, bool) {
	before := ctx.Errors.Len()
	dir := ctx.Project.Abs(ctx.Project.ControllerDir)
	if len(kinds) > 0 && !ctx.API.HasControllers() && !hasOwnGoFiles(dir) {
		for _, k := range kinds {
			ctx.Errors.Add(firstWebhookPos(k), "%s has +opgen:webhook markers, but the project has no controller package (%s) whose Setup registers webhooks and controllers: a project made by opgen init has one, with a main.go that calls controller.Setup(op); otherwise create %s with a Go file of package %s, call its Setup from main, and run go generate ./... again (or pass --controller-dir to name your package)", k.Name, ctx.Project.ControllerDir, ctx.Project.ControllerDir, PackageName(ctx.Project))
		}
		return nil, false
	}
	funcs, types := packageDecls(ctx)
	methods, embeds := packageMethods(ctx)
	ctors := map[string]bool{}
	seen := map[string]*model.Kind{}
	for _, k := range kinds {
		w := WebhookName(k)
		if prev := seen[w]; prev != nil {
			ctx.Errors.Add(firstWebhookPos(k), "%s %s has +opgen:webhook markers, and so does %s %s (%s): their webhook types would both be %s; put the markers on one version of a kind (the API server converts the others' objects to it), or rename one kind", k.Version.GroupVersion(), k.Name, prev.Version.GroupVersion(), prev.Name, firstWebhookPos(prev), w)
			continue
		}
		seen[w] = k
		if !types[w] {
			if _, err := os.Stat(filepath.Join(dir, WebhookFile(k))); err == nil {
				ctx.Errors.Add(firstWebhookPos(k), "%s has +opgen:webhook markers, but %s declares no type %s, which the generated Setup registers: declare it (type %s struct{}, with the methods of webhook.Validator or webhook.Defaulter), or delete the file and opgen writes the stub again", k.Name, filepath.Join(ctx.Project.ControllerDir, WebhookFile(k)), w, w)
			}
			continue // the stub generator writes it in this run
		}
		if !embeds[w] {
			checkMethods(ctx, k, methods[w])
		}
		if fn, ok := funcs["New"+w]; ok {
			if !isConstructor(fn, w) {
				ctx.Errors.Add(ctx.Position(fn.decl.Name.Pos()), "the generated Setup calls New%s(op) to build the webhook of %s: give it the signature func New%s(op *runtime.Operator) *%s, or rename it", w, k.Name, w, w)
			}
			ctors[w] = true
		}
	}
	return ctors, ctx.Errors.Len() == before
}

// checkMethods reports, at its marker, each webhook marker of k whose
// methods the webhook type lacks.
func checkMethods(ctx *gen.Context, k *model.Kind, has map[string]bool) {
	w := WebhookName(k)
	report := func(marker string, want []string, iface, sig string) {
		var missing []string
		for _, m := range want {
			if !has[m] {
				missing = append(missing, m)
			}
		}
		if len(missing) == 0 {
			return
		}
		noun := "method"
		if len(missing) > 1 {
			noun = "methods"
		}
		ctx.Errors.Add(k.Webhook.Pos(marker), "%s has +%s, but %s has no %s %s: implement %s[*%s.%s] (%s), or remove the marker", k.Name, marker, w, strings.Join(missing, " or "), noun, iface, k.Version.Name, k.Name, sig)
	}
	obj := "*" + k.Version.Name + "." + k.Name
	if k.Webhook.Validate {
		report("opgen:webhook:validate", validateMethods, "webhook.Validator",
			fmt.Sprintf("func (w *%s) ValidateCreate(ctx context.Context, obj %s) (webhook.Warnings, error) and ValidateUpdate(ctx, old, obj %s); add ValidateDelete(ctx, obj %s) only to check deletions", w, obj, obj, obj))
	}
	if k.Webhook.Default {
		report("opgen:webhook:default", defaultMethods, "webhook.Defaulter",
			fmt.Sprintf("func (w *%s) Default(ctx context.Context, obj %s) error", w, obj))
	}
}

// firstWebhookPos is where k's first webhook marker is.
func firstWebhookPos(k *model.Kind) token.Position {
	if k.Webhook.Validate {
		return k.Webhook.Pos("opgen:webhook:validate")
	}
	return k.Webhook.Pos("opgen:webhook:default")
}

// webhookGlue writes the declarations of one kind's webhooks.
type webhookGlue struct {
	p    *gen.Project
	k    *model.Kind
	ctor bool
}

func (g webhookGlue) obj() *jen.Statement {
	return jen.Op("*").Qual(g.k.Version.ImportPath, g.k.Name)
}

// handler is what Setup registers: New<Kind>Webhook(op), or the zero
// value.
func (g webhookGlue) handler() jen.Code {
	if g.ctor {
		return jen.Id("New" + WebhookName(g.k)).Call(jen.Id("op"))
	}
	return jen.Op("&").Id(WebhookName(g.k)).Values()
}

func (g webhookGlue) checks(f *jen.File) {
	w, k := WebhookName(g.k), g.k
	if k.Webhook.Validate {
		f.Line()
		f.Commentf("%s validates %s objects (+opgen:webhook:validate).", w, k.Name)
		f.Var().Id("_").Qual(webhookPkg, "Validator").Types(g.obj()).Op("=").Parens(jen.Op("*").Id(w)).Parens(jen.Nil())
	}
	if k.Webhook.Validate && k.Webhook.HasValidateDelete && !k.Webhook.Opaque {
		f.Line()
		f.Commentf("%s checks deletions too (ValidateDelete): its webhook is called on DELETE,", w)
		f.Comment("so a deletion waits for the operator. Remove the method to let them through.")
		f.Var().Id("_").Qual(webhookPkg, "DeleteValidator").Types(g.obj()).Op("=").Parens(jen.Op("*").Id(w)).Parens(jen.Nil())
	}
	if k.Webhook.Default {
		f.Line()
		f.Commentf("%s sets the defaults of %s objects (+opgen:webhook:default).", w, k.Name)
		f.Var().Id("_").Qual(webhookPkg, "Defaulter").Types(g.obj()).Op("=").Parens(jen.Op("*").Id(w)).Parens(jen.Nil())
	}
}

func (g webhookGlue) setup(f *jen.File) {
	w, k := WebhookName(g.k), g.k
	op := jen.Id("op").Op("*").Qual(runtimePkg, "Operator")
	f.Line()
	f.Commentf("Setup%s registers w as the admission webhook of %s %s:", w, k.Version.GroupVersion(), k.Name)
	f.Comment("the operator's webhook server calls it for the API server.")
	f.Func().Id("Setup"+w).Params(op.Clone(), jen.Id("w").Op("*").Id(w)).Error().Block(
		jen.List(jen.Id("cs"), jen.Err()).Op(":=").Id("newClientset").Call(jen.Id("op")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Return(jen.Id("setup"+w).Call(jen.Id("op"), jen.Id("cs"), jen.Id("w"))),
	)
	var body []jen.Code
	body = append(body, jen.Id("kind").Op(":=").Id(lowerFirst(kindFuncName(k))+"Kind").Call(jen.Id("cs")))
	register := func(fn, what string) {
		body = append(body, jen.If(jen.Err().Op(":=").Qual(webhookPkg, fn).Call(jen.Id("op"), jen.Id("kind"), jen.Id("w")), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("register the %s webhook of %s: %%w", what, k.Name)), jen.Err())),
		))
	}
	if k.Webhook.Validate {
		register("Validate", "validating")
	}
	if k.Webhook.Default {
		register("Default", "defaulting")
	}
	body = append(body, jen.Return(jen.Nil()))
	f.Line()
	f.Func().Id("setup"+w).Params(op.Clone(), jen.Id("cs").Qual(g.p.ClientsetPackage(), "Interface"), jen.Id("w").Op("*").Id(w)).Error().Block(body...)
}

// packageMethods returns the names of the methods the controller package
// declares outside the glue, by receiver type, and the types that embed
// another (whose promoted methods the syntax does not show: the compiler
// checks those through the glue's assertions).
func packageMethods(ctx *gen.Context) (map[string]map[string]bool, map[string]bool) {
	methods, embeds := map[string]map[string]bool{}, map[string]bool{}
	for _, f := range userFiles(ctx) {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if recv := model.ReceiverName(d); recv != "" {
					if methods[recv] == nil {
						methods[recv] = map[string]bool{}
					}
					methods[recv][d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && embedsType(ts) {
						embeds[ts.Name.Name] = true
					}
				}
			}
		}
	}
	return methods, embeds
}

// embedsType reports whether ts is a struct with an embedded field, or not
// a struct at all (a defined type of another type, with its methods).
func embedsType(ts *ast.TypeSpec) bool {
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		return true
	}
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			return true
		}
	}
	return false
}
