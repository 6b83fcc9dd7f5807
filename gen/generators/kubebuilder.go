package generators

import (
	"path/filepath"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/accessors"
	"github.com/opgen-sdk/opgen/gen/client"
	"github.com/opgen-sdk/opgen/gen/controller"
	"github.com/opgen-sdk/opgen/gen/rbac"
	"github.com/opgen-sdk/opgen/gen/webhooks"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// KubebuilderRoleName is the ClusterRole of a kubebuilder project, which
// its config/rbac/role_binding.yaml binds to the manager's ServiceAccount.
const KubebuilderRoleName = "manager-role"

// Kubebuilder returns the generators of a project adopted from kubebuilder
// (opgen adopt; opgen generate --layout kubebuilder). They write what
// controller-gen wrote, where it wrote it, and opgen's controllers once
// the project has some:
//
//   - the CRDs, deep copies and registration, as All's;
//   - the ClusterRole manager-role, merged as controller-gen merges it,
//     with the rules derived for opgen's controllers, and no
//     leader-election Role (rbac.Generator.Adopted);
//   - the webhook configurations of the +kubebuilder:webhook markers
//     (webhooks.Kubebuilder);
//   - the clients, the controller glue and the status accessors only while
//     some kind has an opgen controller: a project that moved none keeps
//     the files it had, and its API packages import nothing of opgen.
//
// The API reference and the samples are left out: the project has its own
// config/samples, and docs it did not ask for would be noise.
func Kubebuilder() map[string]gen.Generator {
	all := All()
	for _, name := range []string{"apidocs", "samples", "rbac", "webhooks"} {
		delete(all, name)
	}
	all["client"] = clientsWhenControllers{all["client"].(*client.Generator)}
	all["controller"] = glueWhenControllers{controller.Generator{}}
	all["accessors"] = accessorsWhenControllers{accessors.Generator{}}
	// Names of their own: the no-op stamp keys on the names.
	all["kubebuilder-rbac"] = rbac.Generator{RoleName: KubebuilderRoleName, Adopted: true}
	all["kubebuilder-webhooks"] = webhooks.Kubebuilder{}
	return all
}

// clientsWhenControllers runs the client generator only when the project
// has opgen controllers, whose glue lists and watches through the
// clientset, or asks for clients (--clients). It is no gen.ClientWriter:
// a kubebuilder project writes its clients itself, if any, and hears
// nothing of what its kinds would lack for opgen's.
type clientsWhenControllers struct{ g *client.Generator }

var (
	_ gen.Preparer   = clientsWhenControllers{}
	_ gen.Concurrent = clientsWhenControllers{}
)

// RegisterMarkers registers the client generator's markers.
func (c clientsWhenControllers) RegisterMarkers(into *markers.Registry) error {
	return c.g.RegisterMarkers(into)
}

// Prepare is the client generator's.
func (c clientsWhenControllers) Prepare(ctx *gen.Context) error { return c.g.Prepare(ctx) }

// Concurrent is the client generator's.
func (c clientsWhenControllers) Concurrent() {}

// Generate generates the clients, or removes generated ones.
func (c clientsWhenControllers) Generate(ctx *gen.Context) error {
	if ctx.API.HasControllers() || ctx.Project.Clients.Kinds != "" {
		return c.g.Generate(ctx)
	}
	for _, dir := range ctx.Project.ClientOutputs() {
		ctx.Output.Own(ctx.Project.Abs(dir))
	}
	return nil
}

// glueWhenControllers writes the controller glue only when the project has
// opgen controllers: the controller package of a kubebuilder project holds
// its reconcilers, and needs no empty Setup.
type glueWhenControllers struct{ controller.Generator }

// Generate writes the glue, or removes a generated one.
func (g glueWhenControllers) Generate(ctx *gen.Context) error {
	if ctx.API.HasControllers() || len(ctx.API.Webhooks()) > 0 {
		return g.Generator.Generate(ctx)
	}
	ctx.Output.Own(filepath.Join(ctx.Project.Abs(ctx.Project.ControllerDir), controller.FileName))
	return nil
}

// accessorsWhenControllers writes the status accessors (which the runtime
// reads, and which import opgen's apis) only when the project has opgen
// controllers.
type accessorsWhenControllers struct{ accessors.Generator }

// Generate writes the accessors, or removes generated ones.
func (g accessorsWhenControllers) Generate(ctx *gen.Context) error {
	if ctx.API.HasControllers() {
		return g.Generator.Generate(ctx)
	}
	ctx.OwnInEveryPackage(accessors.FileName)
	return nil
}
