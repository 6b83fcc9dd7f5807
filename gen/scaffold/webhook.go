package scaffold

import (
	"github.com/dave/jennifer/jen"
	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/controller"
)

const webhookPkg = "github.com/opgen-sdk/opgen/pkg/webhook"

// WebhookStub returns the webhook stub of k, a kind marked
// +opgen:webhook:validate or +opgen:webhook:default: the type
// <Kind>Webhook with the methods its markers ask for, each accepting
// everything, with a doc comment that shows how to reject.
func WebhookStub(p *gen.Project, k *model.Kind) []byte {
	f := jen.NewFilePathName(p.ImportPath(p.ControllerDir), controller.PackageName(p))
	f.ImportAlias(k.Version.ImportPath, k.Version.Alias())
	f.ImportName(webhookPkg, "webhook")
	w, n, alias := controller.WebhookName(k), k.Name, k.Version.Alias()
	comment(f,
		w+" admits "+n+" objects ("+k.Version.GroupVersion().String()+"): the API server calls it",
		"on every write of one, through the operator's webhook server, and the",
		"generated Setup registers it (see +opgen:webhook on "+n+").",
		"",
		"opgen wrote this file once and never overwrites it: it is yours. To give",
		"the webhook what it needs (typed cache readers, clients), declare",
		"",
		"\tfunc New"+w+"(op *runtime.Operator) *"+w,
		"",
		"and Setup builds it with that function instead of the zero value.",
	)
	f.Type().Id(w).Struct()
	obj := jen.Op("*").Qual(k.Version.ImportPath, n)
	ctx := jen.Id("ctx").Qual("context", "Context")
	results := jen.Params(jen.Qual(webhookPkg, "Warnings"), jen.Error())
	if k.Webhook.Validate {
		method := func(name string, doc []string, params ...jen.Code) {
			f.Line()
			comment(f, doc...)
			f.Func().Params(jen.Id("w").Op("*").Id(w)).Id(name).Params(params...).Add(results.Clone()).Block(jen.Return(jen.Nil(), jen.Nil()))
		}
		method("ValidateCreate", []string{
			"ValidateCreate accepts or rejects a new " + n + ". Return an error to reject it;",
			"apimachinery's field errors make kubectl show each field:",
			"",
			"\tvar errs field.ErrorList",
			"\tif obj.Spec.Title == \"\" {",
			"\t\terrs = append(errs, field.Required(field.NewPath(\"spec\", \"title\"), \"give the " + n + " a title\"))",
			"\t}",
			"\tif len(errs) > 0 {",
			"\t\treturn nil, apierrors.NewInvalid(" + alias + ".SchemeGroupVersion.WithKind(\"" + n + "\").GroupKind(), obj.Name, errs)",
			"\t}",
			"",
			"(field is k8s.io/apimachinery/pkg/util/validation/field). Warnings are",
			"shown to the client and do not reject.",
		}, ctx.Clone(), jen.Id("obj").Add(obj.Clone()))
		method("ValidateUpdate", []string{
			"ValidateUpdate accepts or rejects a change of a " + n + " from old to obj,",
			"as ValidateCreate does; compare them to refuse changing a field.",
			"",
			"Deletions are not checked: the webhook is not called for them, so they",
			"go through while the operator is down. To refuse some, add",
			"",
			"\tfunc (w *" + w + ") ValidateDelete(ctx context.Context, obj *" + alias + "." + n + ") (webhook.Warnings, error)",
			"",
			"and run go generate: the webhook is then called on DELETE as well, and a",
			"deletion waits for the operator (the webhook fails closed).",
		}, ctx.Clone(), jen.List(jen.Id("old"), jen.Id("obj")).Add(obj.Clone()))
	}
	if k.Webhook.Default {
		f.Line()
		comment(f,
			"Default sets the defaults of a "+n+" that is created or updated, in obj: the",
			"webhook answers with the JSON patch from the object it received to obj.",
			"It runs before validation (and before the API server's own), so what it",
			"sets is validated too. An error rejects the write.",
		)
		f.Func().Params(jen.Id("w").Op("*").Id(w)).Id("Default").Params(ctx.Clone(), jen.Id("obj").Add(obj.Clone())).Error().Block(jen.Return(jen.Nil()))
	}
	return []byte(f.GoString())
}
