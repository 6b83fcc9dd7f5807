package webhooks

import (
	"path/filepath"

	"sigs.k8s.io/controller-tools/pkg/markers"
	ctwebhook "sigs.k8s.io/controller-tools/pkg/webhook"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/pkg/manifest"
)

// Kubebuilder writes config/webhook/manifests.yaml of a project adopted
// from kubebuilder: the configurations of its +kubebuilder:webhook
// markers, with controller-tools' webhook generator, as controller-gen's
// webhook generator writes them. The webhooks stay controller-runtime's,
// served by the project's manager; +opgen:webhook markers are an error
// here, since their configurations would need a file of their own.
type Kubebuilder struct{}

var _ gen.Generator = Kubebuilder{}

// RegisterMarkers registers +kubebuilder:webhook and
// +kubebuilder:webhookconfiguration.
func (Kubebuilder) RegisterMarkers(into *markers.Registry) error {
	return ctwebhook.Generator{}.RegisterMarkers(into)
}

// Generate writes the configurations, or removes a stale file when no
// marker asks for one.
func (Kubebuilder) Generate(ctx *gen.Context) error {
	dir := ctx.Project.Abs(filepath.Join(gen.DefaultConfigDir, manifest.WebhookDir))
	ctx.Output.Own(filepath.Join(dir, manifest.WebhookFile))
	for _, k := range ctx.API.Webhooks() {
		ctx.Errors.Add(k.Pos, "%s has an +opgen:webhook marker, but a project adopted from kubebuilder (opgen generate --layout kubebuilder) writes the webhook configurations of its +kubebuilder:webhook markers only: keep the webhook in controller-runtime for now", k.Name)
	}
	return ctwebhook.Generator{}.Generate(ctx.GenerationContext(dir, ctx.Roots))
}
