package scaffold

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"golang.org/x/mod/module"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/dockerfile"
)

// ProjectOptions describe a new operator project for InitProject.
type ProjectOptions struct {
	// Module is the Go module path, such as example.com/hello-operator.
	Module string
	// Name is the operator's name: its binary, field manager, lease and
	// RBAC names. Default: gen.NameOf(Module), the name opgen generate
	// derives; another name is written into the go:generate line.
	Name string
	// OpgenVersion is the version of github.com/opgen-sdk/opgen to
	// require. Required unless Replace is set.
	OpgenVersion string
	// Replace, when set, replaces github.com/opgen-sdk/opgen with this
	// directory (an opgen checkout), for development builds of opgen.
	Replace string
}

// Scaffolder names the opgen that wrote the scaffold, recorded in
// generate.go and the Makefile: its version, or "a development build" when
// opgen is replaced by a checkout.
func (o ProjectOptions) Scaffolder() string {
	if o.Replace != "" {
		return "a development build of opgen"
	}
	return "opgen " + o.OpgenVersion
}

// NameFlag reports whether Name differs from the name opgen generate
// derives from Module, so that the go:generate line must pass it.
func (o ProjectOptions) NameFlag() bool { return o.Name != gen.NameOf(o.Module) }

var operatorName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func (o *ProjectOptions) validate() error {
	var errs []error
	if err := module.CheckPath(o.Module); err != nil {
		errs = append(errs, fmt.Errorf("--module %q is not a module path (%v): use one like example.com/hello-operator", o.Module, err))
	}
	if o.Name == "" && o.Module != "" {
		o.Name = gen.NameOf(o.Module)
	}
	if !operatorName.MatchString(o.Name) || len(o.Name) > 52 {
		errs = append(errs, fmt.Errorf("--name %q must be a DNS label of at most 52 characters (lower-case letters, digits, '-'): it names the Lease and the RBAC", o.Name))
	}
	if o.OpgenVersion == "" && o.Replace == "" {
		errs = append(errs, errors.New("this opgen is a development build with no version to require: pass --replace with the path of your opgen checkout"))
	}
	if o.OpgenVersion == "" {
		o.OpgenVersion = "v0.0.0-00010101000000-000000000000" // replaced
	}
	return errors.Join(errs...)
}

// MakefileTargets are the targets of the Makefile InitProject writes,
// those make help lists, in its order.
func MakefileTargets() []string {
	var out []string
	for _, line := range strings.Split(string(renderText(makefileTemplate, ProjectOptions{Module: "example.com/p", Name: "p"})), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if ok && strings.Contains(rest, "## ") && !strings.ContainsAny(name, " \t$=") {
			out = append(out, name)
		}
	}
	return out
}

// InitProject writes a new operator project into dir: go.mod, main.go,
// generate.go with the line that runs opgen, an empty controller package, a Makefile, a Dockerfile,
// a README and a .gitignore. It refuses to overwrite any file; it writes
// nothing when one exists or the options are wrong. The caller runs
// `go mod tidy` and the generators afterwards.
func InitProject(dir string, opts ProjectOptions) (*Created, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	docker, err := dockerfile.Build(dockerfile.Options{})
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		"go.mod":                     renderText(goModTemplate, opts),
		"main.go":                    render(mainTemplate, opts),
		"generate.go":                render(generateTemplate, opts),
		"internal/controller/doc.go": render(controllerDocTemplate, opts),
		"Makefile":                   renderText(makefileTemplate, opts),
		"README.md":                  renderText(readmeTemplate, opts),
		".gitignore":                 []byte(gitignore),
		"Dockerfile":                 docker,
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			return nil, fmt.Errorf("%s exists: opgen init never overwrites; run it in an empty directory", filepath.Join(dir, p))
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	out := &Created{Notes: []string{
		"next: opgen create api --group <group> --version <version> --kind <Kind>, then go generate ./...",
	}}
	for _, p := range paths {
		abs := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(abs, files[p], 0o644); err != nil {
			return nil, err
		}
		out.Files = append(out.Files, abs)
	}
	return out, nil
}

// renderText executes a template whose output is not Go.
func renderText(t *template.Template, data any) []byte {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		panic(err) // the templates are constants
	}
	return b.Bytes()
}

var goModTemplate = template.Must(template.New("go.mod").Parse(`module {{.Module}}

go 1.26.0

require github.com/opgen-sdk/opgen {{.OpgenVersion}}

// go tool opgen runs the opgen of this version, with its dependencies
// recorded in go.sum.
tool github.com/opgen-sdk/opgen/cmd/opgen
{{- if .Replace}}

replace github.com/opgen-sdk/opgen => {{.Replace}}
{{- end}}
`))

var mainTemplate = template.Must(template.New("main.go").Parse(`package main

import (
	"flag"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/debug"

	"github.com/opgen-sdk/opgen/pkg/runtime"

	"{{.Module}}/internal/controller"
)

func main() {
	// --version answers before Main looks for a cluster.
	flag.BoolFunc("version", "print what the binary was built from and exit", printVersion)
	// Main binds the runtime's flags (run with -h to list them), loads the
	// kubeconfig or the in-cluster config, registers every controller of
	// the generated controller.Setup and runs until SIGTERM or Ctrl-C.
	runtime.Main(runtime.Options{Name: "{{.Name}}"}, controller.Setup)
}

// printVersion prints the main module's path and version, the Go version
// and the platform, then exits. ` + "`go version -m`" + ` on the binary lists every
// module.
func printVersion(string) error {
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Printf("%s %s %s %s/%s\n", bi.Path, bi.Main.Version, bi.GoVersion, goruntime.GOOS, goruntime.GOARCH)
	}
	os.Exit(0)
	return nil
}
`))

var generateTemplate = template.Must(template.New("generate.go").Parse(`// Command {{.Name}} is a Kubernetes operator built with opgen.
package main

// go generate ./... regenerates everything derivable from the API types:
// deep copies, registration, clientset, listers, informers, apply
// configurations, CRDs, RBAC and the controller glue.
//
// Scaffolded by {{.Scaffolder}} (go tool opgen version prints the one in use).
{{/* spelled so that go generate does not run this template's line */}}//go:{{"generate"}} go tool opgen generate --strict ./...{{if .NameFlag}} --name {{.Name}}{{end}}
`))

var controllerDocTemplate = template.Must(template.New("doc.go").Parse(`// Package controller holds the operator's controllers: for each kind with
// the opgen:controller marker, a handler type with a typed Reconcile method
// and, optionally, Add, Modify and Delete. opgen writes each handler's stub once, and the
// glue that registers them (zz_generated.controllers.go) on every go generate.
package controller
`))

var makefileTemplate = template.Must(template.New("Makefile").Parse(`# {{.Name}}: run make help for the targets.
# Scaffolded by {{.Scaffolder}}.
NAME := {{.Name}}
IMG ?= $(NAME):dev
NAMESPACE ?= $(NAME)-system
GO ?= go
OPGEN := $(GO) tool opgen

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@echo "make TARGET [NAME=$(NAME)] [IMG=$(IMG)] [NAMESPACE=$(NAMESPACE)]"
	@awk -v name='$(NAME)' -v img='$(IMG)' -v ns='$(NAMESPACE)' 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {d = $$2; gsub(/\$$\(NAME\)/, name, d); gsub(/\$$\(IMG\)/, img, d); gsub(/\$$\(NAMESPACE\)/, ns, d); printf "  %-12s %s\n", $$1, d}' $(MAKEFILE_LIST)

.PHONY: generate
generate: ## Regenerate code, CRDs and RBAC from the API types
	$(GO) generate ./...

.PHONY: manifests
manifests: generate ## Write deploy/$(NAME).yaml: CRDs, RBAC, ServiceAccount and a Deployment of $(IMG); deploy/monitoring: its Grafana dashboard and alerts
	$(OPGEN) manifests --name $(NAME) --namespace $(NAMESPACE) --image $(IMG) --out deploy/$(NAME).yaml --monitoring deploy/monitoring

.PHONY: kustomize
kustomize: generate ## Write the kustomize layout config/default, manager, rbac, crd, samples (kubectl apply -k config/default)
	$(OPGEN) manifests --format kustomize --name $(NAME) --namespace $(NAMESPACE) --image $(IMG)

.PHONY: chart
chart: generate ## Write the Helm chart deploy/chart, its values defaulting to $(IMG) and $(NAMESPACE)'s settings
	$(OPGEN) manifests --format helm --name $(NAME) --namespace $(NAMESPACE) --image $(IMG) --out deploy/chart

# kubectl: the one on PATH, else the one opgen builds for its local control
# plane (opgen controlplane builds it when missing).
KUBECTL ?= $(or $(shell command -v kubectl 2>/dev/null),$(shell $(OPGEN) controlplane --print-dir)/kubectl)

# install and deploy apply what the project declares, taking over the
# fields another manager changed since (kubectl edit, kubectl patch), as a
# client-side apply would.
.PHONY: install
install: generate ## Apply the Namespace, the CRDs, the ServiceAccount and the RBAC to the current cluster
	$(OPGEN) manifests --name $(NAME) --namespace $(NAMESPACE) --out - | $(KUBECTL) apply --server-side --force-conflicts -f -

.PHONY: uninstall
uninstall: ## Delete what install applied: with the CRDs, every object of their kinds goes
	$(OPGEN) manifests --name $(NAME) --namespace $(NAMESPACE) --out - | $(KUBECTL) delete --ignore-not-found --wait=false -f -

.PHONY: deploy
deploy: generate ## Apply the whole manifest, with a Deployment of $(IMG), to the current cluster
	$(OPGEN) manifests --name $(NAME) --namespace $(NAMESPACE) --image $(IMG) --out - | $(KUBECTL) apply --server-side --force-conflicts -f -

.PHONY: undeploy
undeploy: ## Delete what deploy applied, the Namespace and the CRDs included
	$(OPGEN) manifests --name $(NAME) --namespace $(NAMESPACE) --image $(IMG) --out - | $(KUBECTL) delete --ignore-not-found --wait=false -f -

.PHONY: run
run: generate ## Run the operator here, against the current kubeconfig
	@echo "/metrics and /healthz, /readyz listen on free ports here: see the operator's \"serving\" log line (fix them with --metrics-bind-address and --health-probe-bind-address, \"0\" disables)"
	OPGEN_POD_NAMESPACE=$(NAMESPACE) $(GO) run .

.PHONY: dev
dev: ## Run a local Kubernetes control plane; its kubeconfig goes to .kube/config
	$(OPGEN) dev --kubeconfig .kube/config

.PHONY: test
test: ## Run the tests
	$(GO) test ./...

.PHONY: build
build: generate ## Build bin/$(NAME)
	$(GO) build -o bin/$(NAME) .

.PHONY: image
image: generate ## Build the image without Docker (linux/amd64, linux/arm64) into bin/image; PUSH=1 pushes it to $(IMG) and prints it by digest
	$(OPGEN) image --name $(NAME) $(if $(PUSH),--push $(IMG),--out bin/image)

.PHONY: docker-build
docker-build: ## Build the image $(IMG) with Docker, from the Dockerfile
	docker build -t $(IMG) .
`))

var readmeTemplate = template.Must(template.New("README.md").Parse(`# {{.Name}}

A Kubernetes operator built with [opgen](https://github.com/opgen-sdk/opgen).

| step | command |
|---|---|
| add a kind | ` + "`go tool opgen create api --group G --version V --kind K`" + ` |
| regenerate after changing the API types | ` + "`make generate`" + ` |
| start a local control plane (another terminal) | ` + "`make dev`" + `, then ` + "`export KUBECONFIG=$PWD/.kube/config`" + ` |
| install the CRDs and RBAC | ` + "`make install`" + ` |
| run the operator here | ` + "`make run`" + ` |
| remove the CRDs (and their objects), RBAC and Namespace | ` + "`make uninstall`" + ` |
| deploy it to the current cluster, or remove it | ` + "`make deploy IMG=...`" + `, ` + "`make undeploy`" + ` |
| the whole manifest for a cluster | ` + "`make manifests IMG=registry.example.com/{{.Name}}:v0.1.0`" + ` |

The handlers live in ` + "`internal/controller`" + `; the API types in ` + "`apis/`" + `.
`))
