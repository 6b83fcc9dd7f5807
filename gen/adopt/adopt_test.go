package adopt_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen/adopt"
)

// makefile has the shape of kubebuilder v4's Makefile around controller-gen.
const makefile = `##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate WebhookConfiguration, ClusterRole and CustomResourceDefinition objects.
	"$(CONTROLLER_GEN)" rbac:roleName=manager-role crd webhook paths="./..." output:crd:artifacts:config=config/crd/bases

.PHONY: generate
generate: controller-gen ## Generate code containing DeepCopy methods.
	"$(CONTROLLER_GEN)" object:headerFile="hack/boilerplate.go.txt",year=$(YEAR) paths="./..."

.PHONY: test
test: manifests generate fmt vet setup-envtest ## Run tests.
	go test ./...

## Tool Binaries
KUSTOMIZE ?= $(LOCALBIN)/kustomize
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
ENVTEST ?= $(LOCALBIN)/setup-envtest

## Tool Versions
KUSTOMIZE_VERSION ?= v5.8.1
CONTROLLER_TOOLS_VERSION ?= v0.22.0

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Download kustomize locally if necessary.
$(KUSTOMIZE): $(LOCALBIN)
	$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Download controller-gen locally if necessary.
$(CONTROLLER_GEN): $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

.PHONY: setup-envtest
setup-envtest: envtest
`

const adopted = `##@ Development

.PHONY: manifests
manifests: ## Generate WebhookConfiguration, ClusterRole and CustomResourceDefinition objects.
	go tool opgen generate --layout kubebuilder --name guestbook ./...

.PHONY: generate
generate: ## Generate code containing DeepCopy methods.
	go tool opgen generate --layout kubebuilder --name guestbook ./...

.PHONY: test
test: manifests generate fmt vet setup-envtest ## Run tests.
	go test ./...

## Tool Binaries
KUSTOMIZE ?= $(LOCALBIN)/kustomize
ENVTEST ?= $(LOCALBIN)/setup-envtest

## Tool Versions
KUSTOMIZE_VERSION ?= v5.8.1

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Download kustomize locally if necessary.
$(KUSTOMIZE): $(LOCALBIN)
	$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))

.PHONY: setup-envtest
setup-envtest: envtest
`

func TestRewriteMakefile(t *testing.T) {
	cmd := adopt.Command("guestbook", nil)
	got, err := adopt.RewriteMakefile(makefile, cmd)
	require.NoError(t, err)
	assert.Equal(t, adopted, got)

	again, err := adopt.RewriteMakefile(got, cmd)
	require.NoError(t, err)
	assert.Equal(t, adopted, again, "adopting twice changes nothing")
}

func TestRewriteMakefileKeepsControllerGenWhenUsedElsewhere(t *testing.T) {
	src := makefile + "\nlint-crds: controller-gen\n\t\"$(CONTROLLER_GEN)\" crd paths=./... output:stdout\n"
	got, err := adopt.RewriteMakefile(src, adopt.Command("guestbook", nil))
	require.NoError(t, err)
	assert.Contains(t, got, "CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen", "lint-crds still downloads controller-gen")
	assert.Contains(t, got, "\tgo tool opgen generate --layout kubebuilder --name guestbook ./...\n\n.PHONY: generate")
}

func TestRewriteMakefileWithoutTarget(t *testing.T) {
	_, err := adopt.RewriteMakefile(strings.Replace(makefile, "generate: controller-gen", "codegen: controller-gen", 1), adopt.Command("guestbook", nil))
	require.EqualError(t, err, `the Makefile has no generate target: add one that runs "go tool opgen generate --layout kubebuilder --name guestbook ./..."`)
}

const project = `domain: example.com
layout:
- go.kubebuilder.io/v4
projectName: guestbook
repo: example.com/guestbook
resources:
- api:
    crdVersion: v1
    namespaced: true
  controller: true
  domain: example.com
  group: webapp
  kind: Guestbook
  path: example.com/guestbook/api/v1
  version: v1
  webhooks:
    defaulting: true
    validation: true
    webhookVersion: v1
- controller: true
  external: true
  group: cert-manager.io
  kind: Certificate
  path: github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1
  version: v1
- controller: true
  group: apps
  kind: Deployment
  path: k8s.io/api/apps/v1
  version: v1
version: "3"
`

func writeProject(t *testing.T, project, module string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, adopt.ProjectFile), []byte(project), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+module+"\n\ngo 1.26.0\n"), 0o644))
	return dir
}

func TestReadProject(t *testing.T) {
	p, err := adopt.ReadProject(writeProject(t, project, "example.com/guestbook"))
	require.NoError(t, err)
	assert.Equal(t, "guestbook", p.ProjectName)
	kinds := p.OwnKinds()
	require.Len(t, kinds, 1, "external and core kinds are not the project's")
	assert.Equal(t, "webapp.example.com", kinds[0].GroupName())
	assert.True(t, kinds[0].Webhooks.Validation)
}

func TestReadProjectRefuses(t *testing.T) {
	for _, tc := range []struct{ name, project, module, err string }{
		{"another layout", strings.Replace(project, "go.kubebuilder.io/v4", "go.kubebuilder.io/v3", 1), "example.com/guestbook",
			"PROJECT: layout [go.kubebuilder.io/v3]; opgen adopts kubebuilder's go.kubebuilder.io/v4 layout: migrate the project to it first (kubebuilder alpha generate)"},
		{"another module", project, "example.com/other",
			`PROJECT: repo "example.com/guestbook", but go.mod declares module "example.com/other": run opgen adopt in the module kubebuilder scaffolded`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := adopt.ReadProject(writeProject(t, tc.project, tc.module))
			require.EqualError(t, err, tc.err)
		})
	}
}

// TestConversionWebhookIsAdopted: a kind with a conversion webhook, in two
// versions, is adopted; the project keeps serving the webhook, and the
// kind counts once.
func TestConversionWebhookIsAdopted(t *testing.T) {
	twoVersions := strings.Replace(project, "validation: true", "validation: true\n    conversion: true", 1) + `- api:
    crdVersion: v1
    namespaced: true
  domain: example.com
  group: webapp
  kind: Guestbook
  path: example.com/guestbook/api/v2
  version: v2
`
	twoVersions = strings.Replace(twoVersions, "version: \"3\"\n", "", 1) + "version: \"3\"\n"
	p, err := adopt.ReadProject(writeProject(t, twoVersions, "example.com/guestbook"))
	require.NoError(t, err)
	assert.Equal(t, []string{"Guestbook"}, p.ConversionWebhooks())
	assert.Len(t, p.OwnKinds(), 2)
	assert.Equal(t, 1, p.KindCount(), "one kind in two versions")
}

func TestReadOptions(t *testing.T) {
	mk := strings.Replace(makefile, `"$(CONTROLLER_GEN)" rbac:roleName=manager-role crd webhook`, `"$(CONTROLLER_GEN)" rbac:roleName=manager-role "crd:maxDescLen=0,generateEmbeddedObjectMeta=true,crdVersions=v1" \
		webhook`, 1)
	script := `source "${CODEGEN_PKG}/kube_codegen.sh"
kube::codegen::gen_helpers --boilerplate "${SCRIPT_ROOT}/hack/boilerplate.go.txt" "${SCRIPT_ROOT}/api"
kube::codegen::gen_client \
  --boilerplate "${SCRIPT_ROOT}/hack/boilerplate.go.txt" \
  --output-dir "${SCRIPT_ROOT}/pkg/client" \
  --output-pkg "example.com/guestbook/pkg/client" \
  --with-watch \
  --with-applyconfig \
  --applyconfig-externals k8s.io/api/core/v1.PodTemplateSpec:k8s.io/client-go/applyconfigurations/core/v1 \
  --one-input-api webapp/v1 \
  "${SCRIPT_ROOT}/api"
`
	o := adopt.ReadOptions(mk, map[string]string{"hack/update-codegen.sh": script})
	assert.Equal(t, []string{
		"--crd-max-desc-len", "0", "--generate-embedded-object-meta",
		"--header-file", "hack/boilerplate.go.txt",
		"--clients", "genclient",
		"--applyconfig-externals", "k8s.io/api/core/v1.PodTemplateSpec:k8s.io/client-go/applyconfigurations/core/v1",
		"--client-dir", "pkg/client",
		"--client-trees", "clientset,listers,informers,applyconfiguration",
		"--client-packages", "./api/webapp/v1",
	}, o.Flags)
	require.Len(t, o.Notes, 1)
	assert.Contains(t, o.Notes[0], "hack/update-codegen.sh runs code-generator's gen_client")
	assert.Equal(t, "go tool opgen generate --layout kubebuilder --name guestbook --crd-max-desc-len 0 ./...", adopt.Command("guestbook", []string{"--crd-max-desc-len", "0"}))
}

func TestEnvtestPins(t *testing.T) {
	before := "module m\n\ngo 1.26.0\n\nrequire (\n\tk8s.io/api v0.35.1\n\tsigs.k8s.io/controller-runtime v0.25.0\n)\n"
	after := "module m\n\ngo 1.26.8\n\nrequire (\n\tk8s.io/api v0.37.2\n\tsigs.k8s.io/controller-runtime v0.25.2\n)\n"
	pins, err := adopt.EnvtestPins([]byte(before), []byte(after))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"ENVTEST_VERSION": "v0.25.0", "ENVTEST_K8S_VERSION": "1.35"}, pins)

	none, err := adopt.EnvtestPins([]byte(before), []byte(before))
	require.NoError(t, err)
	assert.Empty(t, none)

	mk := "A ?= 1\nENVTEST_VERSION ?= $(shell v='$(call gomodver,sigs.k8s.io/controller-runtime)'; \\\n  printf '%s\\n' \"$$v\")\nB ?= 2\n"
	got := adopt.PinVersions(mk, pins)
	assert.Equal(t, "A ?= 1\n# Pinned by opgen adopt to what go.mod required before opgen joined the\n# module graph, which moved it: setup-envtest is released with it.\nENVTEST_VERSION ?= v0.25.0\nB ?= 2\n", got)
}

func TestReadProjectWithoutProjectFile(t *testing.T) {
	dir := t.TempDir()
	_, err := adopt.ReadProject(dir)
	require.EqualError(t, err, dir+" has no PROJECT file: run opgen adopt at the root of a kubebuilder project")
}

func TestAddTool(t *testing.T) {
	const mod = "module example.com/guestbook\n\ngo 1.26.0\n\nrequire sigs.k8s.io/controller-runtime v0.25.0\n"
	got, err := adopt.AddTool([]byte(mod), "v0.3.0", "")
	require.NoError(t, err)
	assert.Contains(t, string(got), "github.com/opgen-sdk/opgen v0.3.0")
	assert.Contains(t, string(got), "tool github.com/opgen-sdk/opgen/cmd/opgen")

	older, err := adopt.AddTool(got, "v0.2.0", "")
	require.NoError(t, err)
	assert.Contains(t, string(older), "github.com/opgen-sdk/opgen v0.3.0", "an older opgen does not downgrade the project's")

	replaced, err := adopt.AddTool([]byte(mod), "", "/src/opgen")
	require.NoError(t, err)
	assert.Contains(t, string(replaced), "replace github.com/opgen-sdk/opgen => /src/opgen")

	_, err = adopt.AddTool([]byte(mod), "", "")
	require.ErrorContains(t, err, "pass --replace")
}

func TestMoved(t *testing.T) {
	before := "module m\n\ngo 1.26.0\n\nrequire (\n\tk8s.io/api v0.37.0\n\tsigs.k8s.io/yaml v1.6.0\n)\n\nrequire golang.org/x/net v0.1.0 // indirect\n"
	after := "module m\n\ngo 1.26.8\n\nrequire (\n\tk8s.io/api v0.37.2\n\tsigs.k8s.io/yaml v1.6.0\n\tgithub.com/opgen-sdk/opgen v0.3.0\n)\n\nrequire golang.org/x/net v0.2.0 // indirect\n"
	moved, err := adopt.Moved([]byte(before), []byte(after))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"k8s.io/api v0.37.0 => v0.37.2",
		"go 1.26.0 => 1.26.8 (opgen's module needs it)",
		"1 indirect requirements added or moved to newer versions",
	}, moved)
}
