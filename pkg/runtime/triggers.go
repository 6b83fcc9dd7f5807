package runtime

// What woke an action. The informers' handlers, the action's end and
// Enqueue give the queue a telemetry.Trigger with each key they wake; the
// queue merges them until a worker takes the key (lanes.Keys.Triggers).

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/lanes"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/ownwrites"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// woken is the trigger of an add or delete of m (of kind, named object
// when it is not the action's own), or of the initial list's add.
func woken(kind telemetry.TriggerKind, object string, m metav1.Object, initial bool) telemetry.Trigger {
	if initial {
		return telemetry.Trigger{Kind: telemetry.TriggerStart, Object: object}
	}
	return telemetry.Trigger{Kind: kind, Object: object, Generation: m.GetGeneration(), ResourceVersion: m.GetResourceVersion()}
}

// update is the change of old into n (of kind, named object when it is
// not the action's own), for the queue to settle.
func update(kind telemetry.TriggerKind, object string, old, n metav1.Object) lanes.Update {
	return lanes.Update{Trigger: woken(kind, object, n, false), Versions: []string{n.GetResourceVersion()}, Old: old, New: n}
}

// settleEchoes returns the queue's Settle: the trigger of u once a
// worker takes its key is an echo, with the fields that changed, when the
// operator's writes (revs) returned every version of it. By then the
// answers of the writes of the key's last action were read, though their
// watch events may have come first.
func settleEchoes(revs *ownwrites.Revisions) func(lanes.Update) telemetry.Trigger {
	return func(u lanes.Update) telemetry.Trigger { return settle(revs, u) }
}

func settle(revs *ownwrites.Revisions, u lanes.Update) telemetry.Trigger {
	t := u.Trigger
	for _, rv := range u.Versions {
		if !revs.Has(rv) {
			return t
		}
	}
	old, n := accessor(u.Old), accessor(u.New)
	if old == nil || n == nil {
		return t
	}
	t.Kind, t.Fields = telemetry.TriggerEcho, changedFields(old, n)
	return t
}

// objectName names an object in a trigger: "Kind namespace/name".
func objectName(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

// maxFields bounds the fields an echo names.
const maxFields = 8

// changedFields are the paths of the fields that differ between a and b,
// but those every write changes (resourceVersion, managedFields,
// generation). A cache that holds only metadata shows no other field: an
// echo that changed none of it names "(not cached)".
func changedFields(a, b metav1.Object) []string {
	ua, err1 := toMap(a)
	ub, err2 := toMap(b)
	if err1 != nil || err2 != nil {
		return nil
	}
	for _, u := range []map[string]any{ua, ub} {
		if md, ok := u["metadata"].(map[string]any); ok {
			delete(md, "resourceVersion")
			delete(md, "managedFields")
			delete(md, "generation")
		}
	}
	var out []string
	diff("", ua, ub, &out)
	if len(out) == 0 {
		return []string{"(not cached)"}
	}
	return out
}

func toMap(m metav1.Object) (map[string]any, error) {
	if u, ok := m.(*unstructured.Unstructured); ok {
		return u.DeepCopy().Object, nil
	}
	if _, ok := m.(kruntime.Object); !ok {
		return nil, fmt.Errorf("%T is no runtime.Object", m)
	}
	return kruntime.DefaultUnstructuredConverter.ToUnstructured(m)
}

// diff appends to out the paths under prefix where a and b differ: the
// leaves of maps, and whole lists.
func diff(prefix string, a, b any, out *[]string) {
	if len(*out) >= maxFields {
		return
	}
	ma, okA := a.(map[string]any)
	mb, okB := b.(map[string]any)
	// A map that one side lacks: the fields under it differ.
	okA, okB = okA || (a == nil && okB), okB || (b == nil && okA)
	if !okA || !okB {
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, strings.TrimPrefix(prefix, "."))
		}
		return
	}
	keys := slices.Sorted(maps.Keys(ma))
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		diff(prefix+"."+k, ma[k], mb[k], out)
	}
}

// accessor returns obj's metadata, or nil.
func accessor(obj any) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return m
}

// changeAt is the trigger of changes at rvs that came while a write of the
// operator's was on its way: an echo when its writes returned them all.
func changeAt(revs *ownwrites.Revisions, rvs []string) telemetry.Trigger {
	t := telemetry.Trigger{Kind: telemetry.TriggerChange, ResourceVersion: rvs[len(rvs)-1]}
	if !slices.ContainsFunc(rvs, func(rv string) bool { return !revs.Has(rv) }) {
		t.Kind = telemetry.TriggerEcho
	}
	return t
}
