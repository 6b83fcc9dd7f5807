package markers

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Controller marks a root kind as reconciled by an opgen controller. opgen
// generates the glue that registers the controller with the runtime
// (zz_generated.controllers.go in the controller package) and writes, once,
// a stub with the typed Add, Modify, Delete and Reconcile methods.
//
//	// +opgen:controller
//
// Put it on one version of a kind, usually the storage version.
type Controller struct{}

// Owns lists the kinds of the objects the controller creates and owns, as
// [group/]version.Kind separated by ";". The core group has no group part
// (v1.Service). The runtime watches their objects and wakes the owner when
// one changes; the ClusterRole gets get, list, watch, create, patch and
// delete on them so that descendants can be applied and pruned.
//
//	// +opgen:controller:owns=apps/v1.Deployment;v1.Service
type Owns []string

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

// ControllerSpec is what the +opgen:controller markers of one kind say.
type ControllerSpec struct {
	Owns           []schema.GroupVersionKind
	ReconcileEvery time.Duration
	Workers        int
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
// apps/v1.Deployment or v1.Service.
func ParseKindRef(ref string) (schema.GroupVersionKind, error) {
	bad := func(why string) (schema.GroupVersionKind, error) {
		return schema.GroupVersionKind{}, fmt.Errorf("malformed owns reference %q (%s): write [group/]version.Kind, such as apps/v1.Deployment, or v1.Service for the core group, separated by ;", ref, why)
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
