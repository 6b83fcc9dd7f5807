package preview

import "strings"

// Target is what a request's path names.
type Target struct {
	Group       string `json:"group,omitempty"`
	Version     string `json:"version"`
	Resource    string `json:"resource"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	Subresource string `json:"subresource,omitempty"`
}

// namespaceSubresources are the subresources of a Namespace itself, which
// its path names as it would a resource in it (the API server's
// RequestInfoFactory tells them apart the same way).
var namespaceSubresources = map[string]bool{"status": true, "finalize": true}

// ParseTarget reads a resource path: /api/v1/… or /apis/<group>/<version>/…,
// then namespaces/<ns>/ for a namespaced resource, the resource, the name
// and the subresource. It reports false for other paths.
func ParseTarget(path string) (Target, bool) {
	var t Target
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		t.Version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		t.Group, t.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return t, false
	}
	if parts[0] == "namespaces" && len(parts) >= 2 && (len(parts) == 2 || namespaceSubresources[parts[2]]) {
		t.Resource, t.Name = "namespaces", parts[1]
		if len(parts) > 2 {
			t.Subresource = strings.Join(parts[2:], "/")
		}
		return t, true
	}
	if parts[0] == "namespaces" && len(parts) >= 3 {
		t.Namespace, parts = parts[1], parts[2:]
	}
	t.Resource = parts[0]
	if len(parts) > 1 {
		t.Name = parts[1]
	}
	if len(parts) > 2 {
		t.Subresource = strings.Join(parts[2:], "/")
	}
	return t, true
}

// Path is the path of t, as ParseTarget reads it.
func (t Target) Path() string {
	var b strings.Builder
	if t.Group == "" {
		b.WriteString("/api/" + t.Version)
	} else {
		b.WriteString("/apis/" + t.Group + "/" + t.Version)
	}
	if t.Namespace != "" {
		b.WriteString("/namespaces/" + t.Namespace)
	}
	b.WriteString("/" + t.Resource)
	for _, s := range []string{t.Name, t.Subresource} {
		if s != "" {
			b.WriteString("/" + s)
		}
	}
	return b.String()
}

// event reports whether t is a collection of Events, core or
// events.k8s.io.
func (t Target) event() bool {
	return t.Resource == "events" && (t.Group == "" || t.Group == "events.k8s.io")
}
