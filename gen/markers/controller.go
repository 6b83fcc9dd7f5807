package markers

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Controller marks a root kind as reconciled by an opgen controller. opgen
// generates the glue that registers the controller with the runtime
// (zz_generated.controllers.go in the controller package) and writes, once,
// a stub with a typed Reconcile method (and Delete with opgen create api
// --with-delete).
//
//	// +opgen:controller
//
// Put it on one version of a kind, usually the storage version. A kind may
// have a controller in several versions only with a dispatch rule on each
// (see Dispatch).
type Controller struct{}

// Owns lists the kinds of the objects the controller creates and owns, as
// [group/]version.Kind separated by ";". The core group has no group part
// (v1.Service). The runtime watches their objects and wakes the owner when
// one changes; the ClusterRole gets get, list, watch, create, patch and
// delete on them so that owned objects can be applied and pruned (no delete
// on a kind it retains, see Retain).
//
//	// +opgen:controller:owns=apps/v1.Deployment;v1.Service
type Owns []string

// Retain lists owned kinds whose objects accumulate (Jobs of each run,
// backups, reports), as [group/]version.Kind separated by ";": the objects
// of such a kind that the handler does not declare in an action are kept,
// not pruned (runtime.ControllerOptions.Retain); the garbage collector
// removes them with their owner. Each must be in owns. Since nothing
// prunes them, the ClusterRole gets no delete on a retained kind, unless
// the handler deletes old ones itself: opgen finds the calls of
// plug.DeleteNow in the controller package, and a call with an action of
// the kind (a parameter declared *plug.Action[*v1.Schedule]) keeps delete
// on the controller's retained kinds. A call whose action opgen cannot
// tell so keeps it for every controller.
//
//	// +opgen:controller:owns=batch/v1.Job
//	// +opgen:controller:retain=batch/v1.Job
type Retain []string

// Reads lists the kinds whose full objects the handler reads from the
// operator's caches, as [group/]version.Kind separated by ";", like owns.
// The glue gets a <Kind>Readers type (New<Kind>Readers(op)) with one
// method per read kind that returns a typed cached reader
// (*runtime.Reader); the runtime starts and syncs its informers in every
// namespace the operator watches, and the ClusterRole gets get, list and
// watch on the kind. An owned built-in kind can be read without being
// listed here: owns gives its reader too. Only Kubernetes built-in kinds
// (package builtin's table) have readers.
//
//	// +opgen:controller:reads=v1.ConfigMap;v1.Secret
type Reads []string

// CacheSpec keeps in the controller's cache only the named fields of the
// kind's spec (their JSON names; a dotted path keeps one field of a nested
// struct): the handler's methods, Delete included, see the rest of spec
// as zero, and the operator holds less memory per object. Name every
// spec field the handler reads. Metadata and status are always cached
// whole. A handler of such a kind must not Update an object it read from
// the cache (the update would clear the fields not cached); writes by
// apply configurations send only the fields they set and are safe. See
// runtime.ControllerOptions.Project.
//
//	// +opgen:controller:cacheSpec=image;replicas;config
type CacheSpec []string

// Watches wakes objects of the controller when objects of another kind
// change: map names a function of the controller package,
//
//	func(obj metav1.Object) []cache.ObjectName
//
// that returns the keys of the controller's objects to run Reconcile for.
// The kind is watched metadata-only (runtime.Watch), and the ClusterRole
// gets list and watch on it. Repeat the marker for each kind.
//
//	// +opgen:controller:watches=v1.ConfigMap,map=todosOfConfigMap
type Watches struct {
	// Kind is the watched kind, as [group/]version.Kind.
	Kind string
	// Map is the mapping function's name.
	Map string
}

// ReconcileEvery runs Reconcile on every object of the kind this long
// after it was last handled, even when nothing changed. It is a Go
// duration (30s, 5m, 1h30m). Without it there is no periodic reconcile.
//
//	// +opgen:controller:reconcileEvery=5m
type ReconcileEvery string

// Workers is how many objects of the kind the controller handles at once.
// One object is never handled by two workers at the same time. Without it
// the operator's default applies.
//
//	// +opgen:controller:workers=4
type Workers int

// For makes a type of the controller package (default internal/controller)
// the handler of a Kubernetes built-in kind, named as [group/]version.Kind
// (v1.Pod, apps/v1.Deployment). The type, which the user writes, implements
// plug.Handler of the kind (Reconcile; Add and Modify optional; Delete to
// keep a finalizer); opgen generates its glue, watching through client-go's typed
// client (package builtin), and its RBAC. owns, reconcileEvery, workers and
// labelSelector apply to it as to a custom kind's controller.
//
//	// PodPrinter logs every Pod.
//	// +opgen:controller:for=v1.Pod
//	type PodPrinter struct{}
//
// The kind must be one of package builtin's Kinds. A custom kind takes
// +opgen:controller on its API type instead.
type For string

// LabelSelector limits the controller of a built-in kind
// (+opgen:controller:for) to the objects whose labels match: only they are
// watched and cached. It is a Kubernetes label selector; quote it when it
// holds a comma. An object whose labels stop matching looks deleted to the
// controller; when the handler has Delete, that object keeps its finalizer,
// and if it is deleted later, no Delete runs to remove it.
//
//	// +opgen:controller:labelSelector=app.kubernetes.io/managed-by=shop
//	// +opgen:controller:labelSelector="tier in (web,api),!canary"
type LabelSelector string

// Dispatch lets a kind have a controller in several of its API versions:
// every version marked +opgen:controller carries the same dispatch, and
// each object is handled by exactly one of the controllers.
//
//	// +opgen:controller:dispatch=written
//
// sends each object to the controller of the version it was last written
// in (read from metadata.managedFields; the operator's own writes and
// status writes do not count), and objects that rule does not place (only
// the operator wrote them, or two versions were written in the same
// second) to the storage version's controller, or the oldest version's
// when the storage version has none.
//
//	// +opgen:controller:dispatch=v2
//
// sends every object to the named version's controller. With either, the
// annotation opgen.dev/controller-version=<version> on an object sends it
// to that version's controller. The controllers of the other versions are
// named <Kind><Version>Controller (WidgetV2Controller); the oldest
// version's keeps <Kind>Controller. See runtime.VersionDispatch.
type Dispatch string

// ControllerSpec is what the +opgen:controller markers of one kind, or of
// one handler type of a built-in kind, say.
type ControllerSpec struct {
	// For is the built-in kind of a handler type (+opgen:controller:for);
	// empty for a custom kind's controller.
	For            schema.GroupVersionKind
	Owns           []schema.GroupVersionKind
	Retain         []schema.GroupVersionKind
	Reads          []schema.GroupVersionKind
	Watches        []WatchSpec
	ReconcileEvery time.Duration
	Workers        int
	LabelSelector  string
	// Dispatch is "written" or the version that handles the objects of a
	// kind with controllers in several versions; "" without one.
	Dispatch string
	// NamesOwned says the controller names owned objects after the
	// object (+opgen:controller:namesOwned).
	NamesOwned bool
	// CacheSpec are the paths of the spec fields the controller's cache
	// keeps (+opgen:controller:cacheSpec), as written; empty: all.
	CacheSpec []string
}

// WatchSpec is one +opgen:controller:watches marker: the watched kind and
// the name of its mapping function.
type WatchSpec struct {
	Kind schema.GroupVersionKind
	Map  string
}

// ApplyToController marks the kind as having a controller; the spec's
// presence says so, there is nothing to set.
func (Controller) ApplyToController(*ControllerSpec) error { return nil }

// ApplyToController parses every reference and adds the kinds, keeping
// their order and dropping repeats.
func (o Owns) ApplyToController(spec *ControllerSpec) error {
	for _, ref := range o {
		gvk, err := ParseKindRef(ref)
		if err != nil {
			return err
		}
		if !containsGVK(spec.Owns, gvk) {
			spec.Owns = append(spec.Owns, gvk)
		}
	}
	return nil
}

// ApplyToController checks the form of each path and adds it, keeping
// their order and dropping repeats; the model resolves them against the
// spec's type.
func (c CacheSpec) ApplyToController(spec *ControllerSpec) error {
	for _, p := range c {
		p = strings.TrimSpace(p)
		for _, part := range strings.Split(p, ".") {
			if !isIdent(part) {
				return fmt.Errorf("cacheSpec=%s: %q is not a field path: write the JSON names of spec's fields, separated by ;, with a dot into a nested struct, such as cacheSpec=image;replicas;template.port", strings.Join(c, ";"), p)
			}
		}
		if !slices.Contains(spec.CacheSpec, p) {
			spec.CacheSpec = append(spec.CacheSpec, p)
		}
	}
	return nil
}

// ApplyToController parses every reference and adds the kinds, keeping
// their order and dropping repeats; the model checks that each is owned.
func (r Retain) ApplyToController(spec *ControllerSpec) error {
	for _, ref := range r {
		gvk, err := parseKindRef(ref, "retain", true)
		if err != nil {
			return err
		}
		if !containsGVK(spec.Retain, gvk) {
			spec.Retain = append(spec.Retain, gvk)
		}
	}
	return nil
}

// ApplyToController parses every reference and adds the kinds, keeping
// their order and dropping repeats.
func (r Reads) ApplyToController(spec *ControllerSpec) error {
	for _, ref := range r {
		gvk, err := parseKindRef(ref, "reads", true)
		if err != nil {
			return err
		}
		if !containsGVK(spec.Reads, gvk) {
			spec.Reads = append(spec.Reads, gvk)
		}
	}
	return nil
}

// ParseMarker reads watches=<[group/]version.Kind>,map=<func>: the kind
// comes first, without a name, as in owns and reads.
func (w *Watches) ParseMarker(_, _, fields string) error {
	kind, rest, _ := strings.Cut(fields, ",")
	key, fn, _ := strings.Cut(rest, "=")
	fn = strings.Trim(strings.TrimSpace(fn), `"`)
	if strings.TrimSpace(key) != "map" || !isIdent(fn) {
		return fmt.Errorf("watches=%s: write watches=<[group/]version.Kind>,map=<func>, such as watches=v1.ConfigMap,map=todosOfConfigMap, naming a func(metav1.Object) []cache.ObjectName of the controller package", fields)
	}
	w.Kind, w.Map = strings.TrimSpace(kind), fn
	return nil
}

// ApplyToController parses the kind and adds the watch; a kind is watched
// once per controller.
func (w Watches) ApplyToController(spec *ControllerSpec) error {
	gvk, err := parseKindRef(w.Kind, "watches", false)
	if err != nil {
		return err
	}
	for _, o := range spec.Watches {
		if o.Kind == gvk {
			return fmt.Errorf("watches=%s is declared twice (map=%s and map=%s): one mapping function per watched kind, which may return the keys of both", FormatKindRef(gvk), o.Map, w.Map)
		}
	}
	spec.Watches = append(spec.Watches, WatchSpec{Kind: gvk, Map: w.Map})
	return nil
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// ApplyToController parses the kind reference; a handler handles one kind.
func (f For) ApplyToController(spec *ControllerSpec) error {
	gvk, err := parseKindRef(string(f), "for", false)
	if err != nil {
		return err
	}
	if !spec.For.Empty() && spec.For != gvk {
		return fmt.Errorf("for=%s: the type already handles %s; a handler type handles one kind, so declare another type for %s", FormatKindRef(gvk), FormatKindRef(spec.For), FormatKindRef(gvk))
	}
	spec.For = gvk
	return nil
}

// ApplyToController parses the selector, so that a mistake is reported at
// the marker rather than by the API server when the operator starts.
func (l LabelSelector) ApplyToController(spec *ControllerSpec) error {
	if _, err := labels.Parse(string(l)); err != nil || strings.TrimSpace(string(l)) == "" {
		why := "it is empty"
		if err != nil {
			why = err.Error()
		}
		return fmt.Errorf("labelSelector=%s is not a label selector (%s): write it like app=web, tier in (web,api) or !canary, quoted when it holds a comma", string(l), why)
	}
	spec.LabelSelector = string(l)
	return nil
}

// ApplyToController checks the rule: written, or a version.
func (d Dispatch) ApplyToController(spec *ControllerSpec) error {
	v := strings.TrimSpace(string(d))
	if v != DispatchWritten && !isVersion(v) {
		return fmt.Errorf("dispatch=%s: write dispatch=written (each object goes to the controller of the version it was last written in) or dispatch=<version>, such as dispatch=v2 (that version's controller handles every object)", string(d))
	}
	if spec.Dispatch != "" && spec.Dispatch != v {
		return fmt.Errorf("dispatch=%s: the kind already says dispatch=%s; keep one", v, spec.Dispatch)
	}
	spec.Dispatch = v
	return nil
}

// DispatchWritten is the dispatch rule by the version an object was last
// written in.
const DispatchWritten = "written"

// ApplyToController parses the duration.
func (r ReconcileEvery) ApplyToController(spec *ControllerSpec) error {
	d, err := time.ParseDuration(string(r))
	if err != nil || d <= 0 {
		return fmt.Errorf("reconcileEvery=%s is not a positive Go duration: write it like 30s, 5m or 1h30m", string(r))
	}
	spec.ReconcileEvery = d
	return nil
}

// ApplyToController sets the number of workers.
func (w Workers) ApplyToController(spec *ControllerSpec) error {
	if w < 1 {
		return fmt.Errorf("workers=%d: give a number of workers of at least 1, or drop the marker for the operator's default", int(w))
	}
	spec.Workers = int(w)
	return nil
}

// ParseKindRef parses a [group/]version.Kind reference such as
// apps/v1.Deployment or v1.Service, as +opgen:controller:owns lists them.
func ParseKindRef(ref string) (schema.GroupVersionKind, error) {
	return parseKindRef(ref, "owns", true)
}

// parseKindRef parses ref, the argument of the marker named what, which
// lists references when list is true.
func parseKindRef(ref, what string, list bool) (schema.GroupVersionKind, error) {
	sep := ""
	if list {
		sep = ", separated by ;"
	}
	bad := func(why string) (schema.GroupVersionKind, error) {
		return schema.GroupVersionKind{}, fmt.Errorf("malformed %s reference %q (%s): write [group/]version.Kind, such as apps/v1.Deployment, or v1.Service for the core group%s", what, ref, why, sep)
	}
	ref = strings.TrimSpace(ref)
	gv, kind, ok := strings.Cut(ref, ".")
	if gv == "" {
		return bad("no version")
	}
	// The group may itself contain dots (example.com/v1.Widget): the kind
	// follows the last dot after the last slash.
	if slash := strings.LastIndex(ref, "/"); slash >= 0 {
		dot := strings.Index(ref[slash:], ".")
		if dot < 0 {
			return bad("no kind after the version")
		}
		gv, kind, ok = ref[:slash+dot], ref[slash+dot+1:], true
	}
	if !ok || kind == "" {
		return bad("no kind after the version")
	}
	if strings.ContainsAny(kind, "./ ") || !isUpper(kind[0]) {
		return bad("the kind must be one capitalized word")
	}
	group, version, hasGroup := strings.Cut(gv, "/")
	if !hasGroup {
		group, version = "", gv
	}
	if hasGroup && group == "" || !isVersion(version) {
		return bad(fmt.Sprintf("%q is not a version like v1 or v1beta1", version))
	}
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}, nil
}

func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

func isVersion(v string) bool {
	if len(v) < 2 || v[0] != 'v' || v[1] < '1' || v[1] > '9' {
		return false
	}
	for _, r := range v[1:] {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z') {
			return false
		}
	}
	return true
}

func containsGVK(list []schema.GroupVersionKind, gvk schema.GroupVersionKind) bool {
	for _, g := range list {
		if g == gvk {
			return true
		}
	}
	return false
}

// FormatKindRef writes gvk the way the owns marker reads it.
func FormatKindRef(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Version + "." + gvk.Kind
	}
	return gvk.Group + "/" + gvk.Version + "." + gvk.Kind
}
