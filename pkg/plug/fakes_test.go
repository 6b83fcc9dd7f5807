package plug_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
)

// widget is a small kind with a status, for unit tests of the steps.
type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              widgetSpec   `json:"spec"`
	Status            widgetStatus `json:"status,omitempty"`
}

type widgetSpec struct {
	Size int `json:"size"`
}

type widgetStatus struct {
	apis.Status `json:",inline"`
	Phase       string `json:"phase,omitempty"`
}

func (w *widget) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	w.Status.Status.DeepCopyInto(&out.Status.Status)
	return &out
}
func (w *widget) GetObservedGeneration() int64      { return w.Status.ObservedGeneration }
func (w *widget) SetObservedGeneration(g int64)     { w.Status.ObservedGeneration = g }
func (w *widget) GetConditions() []metav1.Condition { return w.Status.Conditions }
func (w *widget) SetConditions(c []metav1.Condition) {
	w.Status.Conditions = c
}

var widgetGVK = schema.GroupVersionKind{Group: "test.opgen.dev", Version: "v1", Kind: "Widget"}

func newWidget(generation, observed int64) *widget {
	w := &widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", UID: "uid-1", Generation: generation}}
	w.Status.ObservedGeneration = observed
	return w
}

// patch is one Patch call of fakeClient.
type patch struct {
	name        string
	pt          types.PatchType
	body        string
	opts        metav1.PatchOptions
	subresource []string
}

// fakeClient records patches and answers them with reply (or the error).
type fakeClient struct {
	mu      sync.Mutex
	patches []patch
	reply   func(p patch) (*widget, error)
}

func (c *fakeClient) Get(context.Context, string, metav1.GetOptions) (*widget, error) {
	return nil, fmt.Errorf("not used")
}

func (c *fakeClient) Patch(_ context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*widget, error) {
	p := patch{name, pt, string(data), opts, sub}
	c.mu.Lock()
	c.patches = append(c.patches, p)
	c.mu.Unlock()
	if c.reply != nil {
		return c.reply(p)
	}
	return &widget{}, nil
}

// fakeStore is a OwnedStore in memory.
type fakeStore struct {
	owned   map[schema.GroupVersionKind]bool
	applied []*unstructured.Unstructured
	hashes  map[plug.ObjectKey]string // what "the cache" carries
	pruned  []map[plug.ObjectKey]bool
	prunes  []func(schema.GroupVersionKind) bool
	deleted []plug.ObjectKey
	// now are the calls a handler made now (plug.WrittenNow), by owner.
	now []string
}

func (s *fakeStore) writtenNow(ctx context.Context, call string) {
	if owner, ok := plug.WrittenNow(ctx); ok {
		s.now = append(s.now, call+" "+string(owner))
	}
}

func (s *fakeStore) Namespaced(gvk schema.GroupVersionKind) (bool, error) {
	if !s.owned[gvk] {
		return false, fmt.Errorf("not owned: %s", gvk.Kind)
	}
	return true, nil
}

func (s *fakeStore) Applied(k plug.ObjectKey, hash string, _ func() (*unstructured.Unstructured, error)) bool {
	return s.hashes[k] == hash
}

func (s *fakeStore) Apply(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	s.writtenNow(ctx, "apply")
	k := plug.ObjectKey{GVK: u.GroupVersionKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
	s.applied = append(s.applied, u)
	if s.hashes == nil {
		s.hashes = map[plug.ObjectKey]string{}
	}
	s.hashes[k] = u.GetAnnotations()[plug.AppliedHashAnnotation]
	return u, nil
}

// Create creates u unless "the cache" has it (AlreadyExists), or fails
// for the name "refused".
func (s *fakeStore) Create(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	k := plug.ObjectKey{GVK: u.GroupVersionKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
	switch _, ok := s.hashes[k]; {
	case ok:
		return nil, apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, u.GetName())
	case u.GetName() == "refused":
		return nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, u.GetName(), errors.New("no"))
	}
	return s.Apply(ctx, u)
}

func (s *fakeStore) Delete(ctx context.Context, k plug.ObjectKey, _ types.UID, _ metav1.DeletionPropagation) error {
	s.writtenNow(ctx, "delete")
	s.deleted = append(s.deleted, k)
	return nil
}

func (s *fakeStore) Prune(_ context.Context, _ types.UID, keep map[plug.ObjectKey]bool, prune func(schema.GroupVersionKind) bool) (int, error) {
	s.pruned = append(s.pruned, keep)
	s.prunes = append(s.prunes, prune)
	return 0, nil
}

// event is one Eventf call of fakeRecorder.
type event struct{ typ, reason, action, note string }

type fakeRecorder struct{ events []event }

func (r *fakeRecorder) Eventf(_ runtime.Object, _ runtime.Object, typ, reason, action, note string, args ...interface{}) {
	r.events = append(r.events, event{typ, reason, action, fmt.Sprintf(note, args...)})
}

// env returns an Env on fakes.
func testEnv(c *fakeClient, s *fakeStore, r *fakeRecorder) plug.Env[*widget] {
	e := plug.Env[*widget]{
		GVK:          widgetGVK,
		Controller:   "widget",
		FieldManager: "test-operator",
		Finalizer:    "test.opgen.dev/finalizer",
		Deletes:      true,
		Client:       func(string) plug.Client[*widget] { return c },
	}
	if s != nil {
		e.Owned = s
	}
	if r != nil {
		e.Recorder = r
	}
	return e
}

// run runs steps then fn as the handler on a.
func run(a *plug.Action[*widget], fn func(a *plug.Action[*widget]) error, steps ...plug.Step[*widget]) error {
	p := append(plug.Pipeline[*widget]{}, steps...)
	p = append(p, plug.StepFunc[*widget](func(_ context.Context, a *plug.Action[*widget], _ plug.Next) error {
		if fn == nil {
			return nil
		}
		return fn(a)
	}))
	return p.Run(context.Background(), a)
}
