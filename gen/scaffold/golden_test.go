package scaffold_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/controller"
	"github.com/opgen-sdk/opgen/gen/internal/gentest"
	"github.com/opgen-sdk/opgen/gen/scaffold"
)

const golden = "../testdata/golden"

// TestGolden compares the stub of every controller of the golden project
// with the stub committed there; go test -update rewrites them.
func TestGolden(t *testing.T) {
	p, api := gentest.Model(t, golden)
	files := map[string][]byte{}
	for _, k := range api.Controllers() {
		path := filepath.Join(p.ControllerDir, strings.ToLower(k.Name)+".go")
		files[filepath.ToSlash(path)] = scaffold.Stub(p, k, scaffold.StubOptions{})
	}
	assert.Len(t, files, 2)
	gentest.Compare(t, golden, files)
}

// TestStubsAreNeverOverwritten runs the generator on the golden project,
// whose stubs exist: it must stage nothing.
func TestStubsAreNeverOverwritten(t *testing.T) {
	files := gentest.Run(t, golden, map[string]gen.Generator{"scaffold": scaffold.Generator{}})
	assert.Empty(t, files)
}

const webhooks = "../testdata/webhooks"

// TestGoldenWebhook compares the webhook stubs of the webhook golden
// project with the files committed there: Gadget's is the project's own
// file, Widget's (whose webhook the project writes by hand) is kept beside
// it as text.
func TestGoldenWebhook(t *testing.T) {
	p, api := gentest.Model(t, webhooks)
	files := map[string][]byte{}
	for _, k := range api.Webhooks() {
		path := filepath.ToSlash(filepath.Join(p.ControllerDir, controller.WebhookFile(k)))
		if k.Controller != nil {
			path = "stubs/" + controller.WebhookFile(k) + ".txt"
		}
		files[path] = scaffold.WebhookStub(p, k)
	}
	assert.Len(t, files, 2)
	gentest.Compare(t, webhooks, files)
}

// TestWebhookStubsAreNeverOverwritten: the webhook types exist, so the
// generator stages nothing.
func TestWebhookStubsAreNeverOverwritten(t *testing.T) {
	files := gentest.Run(t, webhooks, map[string]gen.Generator{"scaffold": scaffold.Generator{}})
	assert.Empty(t, files)
}
