package servertest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// upgrade replays one fixture of gen/compat/testdata on the API server:
// an object written under the released CRD, then the CRD of the
// fixture's types applied over it, then what the gate's message says of
// such objects, checked.
type upgrade struct {
	fixture string
	// as names the case when another case replays the same fixture.
	as string
	// name is the object's name; "existing" when empty.
	name string
	// spec is the spec of the object written under the released CRD, in
	// version v1 (in version, when set).
	spec    map[string]any
	version string
	// change edits the fixture's new CRD before it is applied.
	change func(*apiextensionsv1.CustomResourceDefinition)
	// before runs once the object is written, before the new CRD is
	// applied.
	before func(t *testing.T, r *run)
	// check runs once the new CRD is applied (refused is its error then).
	check func(t *testing.T, r *run, refused error)
}

// TestGateMessagesHold checks, for each rule with a failing fixture, the
// message's claim about existing objects on a real API server (Kubernetes
// 1.37, where CRD validation ratcheting is GA): the checks it says the
// server ratchets let an update that leaves the value as it was through,
// and refuse a new invalid value; the others refuse, prune, default or
// refuse the CRD as said.
func TestGateMessagesHold(t *testing.T) {
	long := strings.Repeat("a", 80)
	cases := []upgrade{
		{fixture: "enum-added", spec: map[string]any{"size": int64(1), "color": "blue"}, check: ratcheted("color", "blue", "yellow")},
		{fixture: "enum-value-removed", spec: map[string]any{"size": int64(1), "color": "blue"}, check: ratcheted("color", "blue", "yellow")},
		{fixture: "minimum-raised", spec: map[string]any{"size": int64(1)}, check: ratcheted("size", int64(1), int64(0))},
		{fixture: "maximum-lowered", spec: map[string]any{"size": int64(1), "name": long}, check: ratcheted("name", long, long[1:])},
		{fixture: "pattern-changed", spec: map[string]any{"size": int64(1), "name": "Hello1"}, check: ratcheted("name", "Hello1", "Hello2")},
		{fixture: "cel-rule-added", spec: map[string]any{"size": int64(20)}, check: ratcheted("size", int64(20), int64(30))},
		{fixture: "required-added", spec: map[string]any{"size": int64(1)}, check: func(t *testing.T, r *run, refused error) {
			require.NoError(t, refused)
			r.serves(t, func() bool { return r.dryRunCreate(map[string]any{"size": int64(1)}) != nil })
			assert.NoError(t, r.label(), "the whole spec unchanged: ratcheted")
			assert.Error(t, r.set("size", int64(2)), "objects stored without owner can no longer change spec")
		}},
		{fixture: "type-changed", spec: map[string]any{"size": int64(3)}, check: func(t *testing.T, r *run, refused error) {
			require.NoError(t, refused)
			r.serves(t, func() bool { return r.dryRunCreate(map[string]any{"size": "3"}) == nil })
			var typed struct {
				Spec struct {
					Size string `json:"size"`
				} `json:"spec"`
			}
			data, err := json.Marshal(r.get(t).Object)
			require.NoError(t, err)
			assert.Error(t, json.Unmarshal(data, &typed), "a client of the new type fails to decode the stored object: %s", data)
			assert.NoError(t, r.label(), "ratcheting lets the unchanged old value through")
			assert.Error(t, r.set("size", int64(4)), "a new value of the old type is refused")
		}},
		{fixture: "field-removed", spec: map[string]any{"size": int64(1), "legacy": "x"}, check: func(t *testing.T, r *run, refused error) {
			require.NoError(t, refused)
			r.serves(t, func() bool {
				_, found, _ := unstructured.NestedString(r.get(t).Object, "spec", "legacy")
				return !found
			})
		}},
		{fixture: "default-added", spec: map[string]any{}, check: func(t *testing.T, r *run, refused error) {
			require.NoError(t, refused)
			before := r.get(t).GetResourceVersion()
			r.serves(t, func() bool {
				size, _, _ := unstructured.NestedInt64(r.get(t).Object, "spec", "size")
				return size == 3
			})
			assert.Equal(t, before, r.get(t).GetResourceVersion(), "defaulted as read, with no write")
		}},
		{fixture: "default-changed", spec: map[string]any{}, check: func(t *testing.T, r *run, refused error) {
			require.NoError(t, refused)
			r.serves(t, func() bool {
				obj, err := r.dryRunCreateObject(map[string]any{})
				size, _, _ := unstructured.NestedInt64(obj.Object, "spec", "size")
				return err == nil && size == 5
			})
			size, _, _ := unstructured.NestedInt64(r.get(t).Object, "spec", "size")
			assert.Equal(t, int64(3), size, "the stored object keeps the old default")
		}},
		{fixture: "scope-changed", spec: map[string]any{"size": int64(1)}, check: func(t *testing.T, _ *run, refused error) {
			require.Error(t, refused, "the API server refuses a new scope")
			assert.Contains(t, refused.Error(), "spec.scope: Invalid value: \"Cluster\": field is immutable")
		}},
		{fixture: "version-removed-storage", version: "v1alpha1", spec: map[string]any{"size": int64(1)}, check: func(t *testing.T, _ *run, refused error) {
			require.Error(t, refused, "the API server refuses a CRD without a stored version")
			assert.Contains(t, refused.Error(), "status.storedVersions[0]: Invalid value: \"v1alpha1\": missing from spec.versions")
		}},
		{
			// The fixture's rule, self >= oldSelf, holds for a value left
			// as it was; one that does not shows that the API server runs
			// a transition rule on every update and never ratchets it,
			// where it ratchets the same rule without oldSelf.
			fixture: "cel-transition-rule", spec: map[string]any{"size": int64(1)},
			change: func(crd *apiextensionsv1.CustomResourceDefinition) {
				size := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["size"]
				size.XValidations[0].Rule = "self != oldSelf"
				crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["size"] = size
			},
			check: func(t *testing.T, r *run, refused error) {
				require.NoError(t, refused)
				r.serves(t, func() bool { return r.label() != nil })
			},
		},
	}
	replayAll(t, cases)
}

// ratcheted checks what the messages of ratcheted rules say: new objects
// with the invalid value are refused, an update that leaves it as it was
// passes, and one that changes it to another invalid value is refused.
func ratcheted(field string, invalid, otherInvalid any) func(*testing.T, *run, error) {
	return func(t *testing.T, r *run, refused error) {
		require.NoError(t, refused)
		r.serves(t, func() bool { return r.dryRunCreate(map[string]any{"size": int64(1), field: invalid}) != nil })
		assert.NoError(t, r.label(), "an update that leaves spec.%s as it was passes", field)
		assert.Error(t, r.set(field, otherInvalid), "an update that changes spec.%s must pass the new check", field)
	}
}

func replayAll(t *testing.T, cases []upgrade) {
	for _, c := range cases {
		if c.as == "" {
			c.as = c.fixture
		}
		t.Run(c.as, func(t *testing.T) {
			t.Parallel()
			c.replay(t)
		})
	}
}

func (c upgrade) replay(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join("..", "testdata", c.fixture)
	group := c.as + ".ratchet.opgen.dev"
	old := regroup(released(t, dir), group)
	cur := regroup(generated(t, dir), group)
	if c.change != nil {
		c.change(cur)
	}
	require.NoError(t, env.ApplyCRDs(ctx, old))
	t.Cleanup(func() { deleteCRD(t, old.Name) })
	version := c.version
	if version == "" {
		version = "v1"
	}
	dyn, err := dynamic.NewForConfig(env.Config)
	require.NoError(t, err)
	r := &run{
		dyn: dyn, group: group, ns: env.Namespace(t), name: c.name,
	}
	if r.name == "" {
		r.name = "existing"
	}
	r = r.in(version)
	_, err = r.res.Create(ctx, r.object(r.name, c.spec), metav1.CreateOptions{})
	require.NoError(t, err, "the object is valid under the released CRD")
	if c.before != nil {
		c.before(t, r)
	}
	c.check(t, r, env.ApplyCRDs(ctx, cur))
}

// released reads the released CRD of a fixture.
func released(t *testing.T, dir string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "config", "released", "*.yaml"))
	require.NoError(t, err)
	require.Len(t, paths, 1)
	data, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	return decodeCRD(t, data)
}

// regroup moves crd to group, so that every case has a CRD of its own.
func regroup(crd *apiextensionsv1.CustomResourceDefinition, group string) *apiextensionsv1.CustomResourceDefinition {
	crd.Spec.Group = group
	crd.Name = crd.Spec.Names.Plural + "." + group
	return crd
}

// run is one replayed upgrade: the object written under the released CRD
// and the resource of its version.
type run struct {
	dyn       *dynamic.DynamicClient
	group, ns string
	name      string
	res       dynamic.ResourceInterface
	version   string
}

// in returns the run for a client of another version of the kind.
func (r *run) in(version string) *run {
	out := *r
	out.res = r.dyn.Resource(schema.GroupVersionResource{Group: r.group, Version: version, Resource: "widgets"}).Namespace(r.ns)
	out.version = r.group + "/" + version
	return &out
}

func (r *run) object(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": r.version, "kind": "Widget",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
}

func (r *run) get(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	obj, err := r.res.Get(context.Background(), r.name, metav1.GetOptions{})
	require.NoError(t, err)
	return obj
}

// serves waits until the API server applies the new CRD, which it does a
// moment after accepting it: until ready holds.
func (r *run) serves(t *testing.T, ready func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return ready(), nil
	})
	require.NoError(t, err, "the API server did not apply the new CRD in 30 s")
}

func (r *run) dryRunCreate(spec map[string]any) error {
	_, err := r.dryRunCreateObject(spec)
	return err
}

func (r *run) dryRunCreateObject(spec map[string]any) (*unstructured.Unstructured, error) {
	obj, err := r.res.Create(context.Background(), r.object("probe", spec), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return &unstructured.Unstructured{}, err
	}
	return obj, nil
}

// label updates the object's labels only.
func (r *run) label() error {
	return r.update(func(obj *unstructured.Unstructured) {
		obj.SetLabels(map[string]string{"touched": time.Now().Format("150405.000000")})
	})
}

// set updates one field of the spec.
func (r *run) set(field string, value any) error {
	return r.update(func(obj *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(obj.Object, value, "spec", field)
	})
}

func (r *run) update(change func(*unstructured.Unstructured)) error {
	obj, err := r.res.Get(context.Background(), r.name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	change(obj)
	_, err = r.res.Update(context.Background(), obj, metav1.UpdateOptions{})
	return err
}
