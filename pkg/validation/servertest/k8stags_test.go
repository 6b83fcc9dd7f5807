package servertest

import (
	"context"
	"encoding/json"
	"fmt"
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
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/pkg/validation"
)

// The +k8s: tags fixture (gen/k8stags/testdata/tags): its CRD, which
// gen/k8stags' test keeps equal to the one its kubebuilder markers give,
// and objects valid and invalid under each of its rules.
var (
	tagsCRD = filepath.Join("..", "..", "..", "gen", "k8stags", "testdata", "tags", "config", "crd", "tags.opgen.dev_probes.yaml")
	probes  = schema.GroupVersionResource{Group: "tags.opgen.dev", Version: "v1", Resource: "probes"}
)

// absent removes a field of the base spec.
const absent = "<absent>"

// tagCase is one object the fixture's CRD rules on: created, or, with
// old, an update of an object stored with old's spec.
type tagCase struct {
	name  string
	old   map[string]any
	spec  map[string]any
	valid bool
}

// spec is a valid spec with the fields of kv set (absent removes one).
func spec(kv ...any) map[string]any {
	s := map[string]any{"name": "probe", "class": "gold"}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == absent {
			delete(s, kv[i].(string))
			continue
		}
		s[kv[i].(string)] = kv[i+1]
	}
	return s
}

func ok(name string, kv ...any) tagCase  { return tagCase{name: name, spec: spec(kv...), valid: true} }
func bad(name string, kv ...any) tagCase { return tagCase{name: name, spec: spec(kv...)} }

// update is an update from the spec old to the spec new.
func update(name string, valid bool, old, new map[string]any) tagCase {
	return tagCase{name: name, old: old, spec: new, valid: valid}
}

func list(v ...any) []any { return append([]any{}, v...) }

func obj(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// tagCases rule on every tag of the fixture: a valid and an invalid value
// at least, at the bounds where there are bounds.
func tagCases() []tagCase {
	uuid := "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
	return []tagCase{
		ok("valid base"),
		bad("required name missing", "name", absent),
		bad("required name empty", "name", ""),
		ok("name at maxLength", "name", strings.Repeat("n", 20)),
		bad("name over maxLength", "name", strings.Repeat("n", 21)),
		bad("required class missing", "class", absent),
		bad("replicas under minimum", "replicas", 0),
		ok("replicas at minimum", "replicas", 1),
		ok("replicas at maximum", "replicas", 10),
		bad("replicas over maximum", "replicas", 11),
		bad("code under minLength", "code", "a"),
		ok("code at minLength", "code", "ab"),
		bad("ports under minItems", "ports", list()),
		ok("ports at minItems", "ports", list(80)),
		ok("ports null, pruned", "ports", nil),
		ok("ports at maxItems", "ports", list(80, 443, 8080)),
		bad("ports over maxItems", "ports", list(1, 2, 3, 4)),
		bad("labels under minProperties", "labels", obj()),
		ok("labels at minProperties", "labels", obj("a", "1")),
		ok("labels at maxProperties", "labels", obj("a", "1", "b", "2")),
		bad("labels over maxProperties", "labels", obj("a", "1", "b", "2", "c", "3")),
		ok("host short name", "host", "web-1"),
		bad("host upper case", "host", "Web"),
		bad("host with a dot", "host", "a.b"),
		bad("host over 63", "host", strings.Repeat("h", 64)),
		ok("domain long name", "domain", "a.example.com"),
		bad("domain upper case", "domain", "A.example.com"),
		bad("domain starts with a dash", "domain", "-a.example.com"),
		ok("id uuid", "id", uuid),
		bad("id upper case", "id", strings.ToUpper(uuid)),
		bad("id without dashes", "id", strings.ReplaceAll(uuid, "-", "")),
		ok("labelKey name", "labelKey", "app"),
		ok("labelKey prefixed", "labelKey", "example.com/app"),
		bad("labelKey starts with a dash", "labelKey", "-app"),
		bad("labelKey two slashes", "labelKey", "a/b/c"),
		bad("labelKey empty", "labelKey", ""),
		ok("prefixedKey prefixed", "prefixedKey", "example.com/app"),
		bad("prefixedKey without prefix", "prefixedKey", "app"),
		ok("labelValue empty", "labelValue", ""),
		ok("labelValue dotted", "labelValue", "v1.2"),
		bad("labelValue starts with a dash", "labelValue", "-v"),
		bad("labelValue over 63", "labelValue", strings.Repeat("v", 64)),
		ok("segment dotted", "segment", "a.b"),
		ok("segment three dots", "segment", "..."),
		bad("segment dot", "segment", "."),
		bad("segment dot dot", "segment", ".."),
		bad("segment slash", "segment", "a/b"),
		bad("segment percent", "segment", "50%"),
		ok("note at maxBytes", "note", "12345678"),
		bad("note over maxBytes", "note", "123456789"),
		ok("note of 8 bytes in 4 runes", "note", "éééé"),
		bad("note of 10 bytes in 5 runes", "note", "ééééé"),
		ok("mode other than none", "mode", "fast"),
		bad("mode none", "mode", "none"),
		ok("color in the enum", "color", "red"),
		bad("color excluded from the enum", "color", "gone"),
		bad("color not a constant", "color", "green"),
		ok("tags a set", "tags", list("a", "b")),
		bad("tags with a duplicate", "tags", list("a", "a")),
		ok("items unique keys", "items", list(obj("name", "a"), obj("name", "b", "value", "x"))),
		bad("items duplicate key", "items", list(obj("name", "a"), obj("name", "a"))),
		bad("items key missing", "items", list(obj("value", "x"))),
		ok("codes unique", "codes", list("a", "b")),
		bad("codes duplicate", "codes", list("a", "b", "a")),
		ok("words short", "words", list("short", "tiny")),
		bad("words one too long", "words", list("short", "toolong")),
		ok("weights not negative", "weights", obj("a", 0, "b", 7)),
		bad("weights negative", "weights", obj("a", -1)),
		ok("annotations label keys", "annotations", obj("example.com/x", "1", "y", "2")),
		bad("annotations key not a label key", "annotations", obj("-x", "1")),
		ok("target name and port", "target", obj("name", "http", "port", 100)),
		ok("target name only", "target", obj("name", "http")),
		bad("target without its required name", "target", obj("port", 1)),
		bad("target port over its maximum", "target", obj("name", "http", "port", 101)),
		bad("legacy forbidden", "legacy", "x"),
		bad("tls without its cert", "tls", true),
		ok("tls with its cert", "tls", true, "cert", "pem"),
		ok("cert alone", "cert", "pem"),
		ok("source git", "source", obj("git", "repo")),
		ok("source image", "source", obj("image", "img")),
		bad("source none", "source", obj()),
		bad("source both", "source", obj("git", "repo", "image", "img")),
		ok("backend Service with service", "backend", obj("type", "Service", "service", "s")),
		ok("backend Res with resource", "backend", obj("type", "Res", "resource", "r")),
		ok("backend other type, no member", "backend", obj("type", "None")),
		bad("backend Service with resource", "backend", obj("type", "Service", "resource", "r")),
		bad("backend Service without service", "backend", obj("type", "Service")),
		bad("backend Res with both", "backend", obj("type", "Res", "resource", "r", "service", "s")),
		ok("hint none", "hint", obj()),
		ok("hint fast", "hint", obj("fast", true)),
		bad("hint both", "hint", obj("fast", true, "small", true)),
		ok("revision on create", "revision", 5),
		ok("late on create", "late", "x"),

		update("class unchanged", true, spec(), spec("replicas", 2)),
		update("class changed", false, spec(), spec("class", "silver")),
		update("zone unchanged", true, spec("zone", "a"), spec("zone", "a", "code", "xy")),
		update("zone modified", false, spec("zone", "a"), spec("zone", "b")),
		update("zone set", true, spec(), spec("zone", "b")),
		update("zone unset", true, spec("zone", "a"), spec()),
		update("late set on update", false, spec(), spec("late", "x")),
		update("late changed", true, spec("late", "x"), spec("late", "y")),
		update("late unset", true, spec("late", "x"), spec()),
		update("sticky unset", false, spec("sticky", "x"), spec()),
		update("sticky changed", true, spec("sticky", "x"), spec("sticky", "y")),
		update("sticky set", true, spec(), spec("sticky", "x")),
		update("frozen item added", false, spec("frozen", list("a")), spec("frozen", list("a", "b"))),
		update("frozen item removed", true, spec("frozen", list("a", "b")), spec("frozen", list("a"))),
		update("kept item removed", false, spec("kept", list("a", "b")), spec("kept", list("a"))),
		update("kept item added", true, spec("kept", list("a")), spec("kept", list("a", "b"))),
		update("revision decreased", false, spec("revision", 5), spec("revision", 4)),
		update("revision increased", true, spec("revision", 5), spec("revision", 6)),
		update("revision same", true, spec("revision", 5), spec("revision", 5, "code", "xy")),
	}
}

// probe is a Probe named name with spec s, its numbers as JSON decodes
// them (int64), as unstructured objects hold them.
func probe(name string, s map[string]any) *unstructured.Unstructured {
	data, err := json.Marshal(map[string]any{
		"apiVersion": "tags.opgen.dev/v1", "kind": "Probe",
		"metadata": map[string]any{"name": name},
		"spec":     s,
	})
	if err != nil {
		panic(err)
	}
	u := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(data, &u.Object); err != nil {
		panic(err)
	}
	return u
}

// TestK8sTagsSameVerdict sends each case of the +k8s: tags fixture to the
// API server (a dry run; an update's old object is stored first) and to
// pkg/validation, and requires the verdict the case expects from both,
// with the same field errors.
func TestK8sTagsSameVerdict(t *testing.T) {
	ctx := context.Background()
	local, err := validation.Load(filepath.Dir(tagsCRD))
	require.NoError(t, err)
	s := newServer(t)
	ns := env.Namespace(t)
	res := s.dyn.Resource(probes).Namespace(ns)
	cases := tagCases()
	require.GreaterOrEqual(t, len(cases), 100, "the issue asks for at least 100 objects")
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("probe-%d", i)
			mine, server := verdicts(ctx, t, res, local, name, c)
			assert.Equal(t, c.valid, server == nil, "server: %v", server)
			assert.Equal(t, causes(t, server), messages(mine), "pkg/validation gives the server's errors")
		})
	}
}

// verdicts runs c on local and on the server: pkg/validation's field
// errors and the server's error.
func verdicts(ctx context.Context, t *testing.T, res dynamic.ResourceInterface, local *validation.Set, name string, c tagCase) (field.ErrorList, error) {
	t.Helper()
	dry := []string{metav1.DryRunAll}
	u := probe(name, c.spec)
	if c.old == nil {
		_, err := res.Create(ctx, u, metav1.CreateOptions{DryRun: dry})
		return local.Validate(ctx, u), err
	}
	old := probe(name, c.old)
	stored, err := res.Create(ctx, old, metav1.CreateOptions{})
	require.NoError(t, err, "store the old object")
	u.SetResourceVersion(stored.GetResourceVersion())
	_, err = res.Update(ctx, u, metav1.UpdateOptions{DryRun: dry})
	return local.ValidateUpdate(ctx, u, old), err
}

// TestK8sTagsRatchet: an object stored before a tag's rule existed keeps
// its invalid value through updates that leave that value alone, on the
// API server (CRD validation ratcheting) and in pkg/validation; an update
// that changes the value is refused by both.
func TestK8sTagsRatchet(t *testing.T) {
	ctx := context.Background()
	installed, err := testenv.ReadCRDs(filepath.Dir(tagsCRD))
	require.NoError(t, err)
	require.Len(t, installed, 1)
	strict := installed[0]
	loose := strict.DeepCopy()
	props := loose.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	name := props.Properties["name"]
	name.MaxLength = nil // +k8s:maxLength=20, not there yet
	props.Properties["name"] = name
	mode := props.Properties["mode"]
	mode.XValidations = nil // +k8s:neq="none", not there yet
	props.Properties["mode"] = mode
	loose.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = props

	s := newServer(t)
	ns := env.Namespace(t)
	res := s.dyn.Resource(probes).Namespace(ns)
	crds := s.dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	long := strings.Repeat("n", 25)
	applySchema(ctx, t, crds, res, loose, true)
	t.Cleanup(func() { applySchema(context.Background(), t, crds, res, strict, false) })
	old := probe("old", spec("name", long, "mode", "none"))
	stored, err := res.Create(ctx, old, metav1.CreateOptions{})
	require.NoError(t, err, "the loose schema takes the object")
	applySchema(ctx, t, crds, res, strict, false)

	local, err := validation.NewSet(strict)
	require.NoError(t, err)
	for _, c := range []tagCase{
		update("invalid name and mode kept, code changed", true, old.Object["spec"].(map[string]any), spec("name", long, "mode", "none", "code", "xy")),
		update("invalid name changed to another invalid one", false, old.Object["spec"].(map[string]any), spec("name", long+"x", "mode", "none")),
		update("invalid mode kept, name made valid", true, old.Object["spec"].(map[string]any), spec("mode", "none")),
		update("mode changed to none again from valid", false, spec(), spec("mode", "none")),
	} {
		t.Run(c.name, func(t *testing.T) {
			u := probe("old", c.spec)
			oldObj := probe("old", c.old)
			if c.name == "mode changed to none again from valid" {
				u, oldObj = probe("fresh", c.spec), probe("fresh", c.old)
				fresh, err := res.Create(ctx, oldObj, metav1.CreateOptions{})
				require.NoError(t, err)
				u.SetResourceVersion(fresh.GetResourceVersion())
			} else {
				u.SetResourceVersion(stored.GetResourceVersion())
			}
			_, server := res.Update(ctx, u, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			assert.Equal(t, c.valid, server == nil, "server: %v", server)
			assert.Equal(t, causes(t, server), messages(local.ValidateUpdate(ctx, u, oldObj)), "pkg/validation gives the server's errors")
		})
	}
}

// applySchema writes crd's schema to the installed CRD and waits until
// the server takes (loose) or refuses (strict) a 25-character name.
func applySchema(ctx context.Context, t *testing.T, crds, res dynamic.ResourceInterface, crd *apiextensionsv1.CustomResourceDefinition, loose bool) {
	t.Helper()
	patch, err := yaml.YAMLToJSON(mustYAML(t, map[string]any{"spec": map[string]any{"versions": crd.Spec.Versions}}))
	require.NoError(t, err)
	_, err = crds.Patch(ctx, crd.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	require.NoError(t, err)
	probeObj := probe("schema-check", spec("name", strings.Repeat("n", 25)))
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := res.Create(ctx, probeObj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return (err == nil) == loose, nil
	})
	require.NoError(t, err, "waited 30s for the API server to serve the new schema of %s (loose: %v)", crd.Name, loose)
}

func mustYAML(t *testing.T, v any) []byte {
	t.Helper()
	data, err := yaml.Marshal(v)
	require.NoError(t, err)
	return data
}
