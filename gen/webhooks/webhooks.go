// Package webhooks writes config/webhook/manifests.yaml: the
// ValidatingWebhookConfiguration and MutatingWebhookConfiguration of the
// kinds marked +opgen:webhook:validate or +opgen:webhook:default, built by
// the same function the runtime registers them with
// (hooks.Configurations), for the operator's default namespace
// <name>-system, reaching its webhook Service. opgen manifests reads the
// file and writes the configurations again for the namespace it is given,
// with the Service, the certificates' RBAC or cert-manager's objects (see
// package manifest). With no webhook the file is removed.
package webhooks

import (
	"path/filepath"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/pkg/manifest"
)

// Generator writes the webhook configurations, from the +opgen: markers
// of the API model.
type Generator struct{ gen.NoMarkers }

var _ gen.Generator = Generator{}

// Generate writes config/webhook/manifests.yaml, or removes a stale one.
func (Generator) Generate(ctx *gen.Context) error {
	path := Path(ctx.Project)
	ctx.Output.Own(path)
	hooks := ctx.API.AdmissionHooks()
	if len(hooks) == 0 {
		return nil
	}
	data, err := manifest.MarshalDocuments(manifest.WebhookConfigurations(ctx.Project.Name, ctx.Project.Name+"-system", hooks))
	if err != nil {
		return err
	}
	ctx.Output.YAML(path, data)
	return nil
}

// Path is where the configurations go: webhook/manifests.yaml beside the
// CRD directory.
func Path(p *gen.Project) string {
	return filepath.Join(filepath.Dir(p.Abs(p.CRDDir)), manifest.WebhookDir, manifest.WebhookFile)
}
