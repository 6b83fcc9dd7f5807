package rbacaudit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"sort"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// Request is what one user asked the API server one or more times: a verb
// on a resource (or a non-resource URL), in a namespace, on a name.
type Request struct {
	Verb string
	// Group and Resource (with its subresource: greetings/status), or URL
	// for a non-resource request (/apis).
	Group, Resource string
	URL             string
	// Namespace and Name of the object, "" when the request has none (a
	// list across namespaces, a create with a generated name).
	Namespace, Name string
	// Count is how many times the user asked; Forbidden how many of them
	// the API server answered 403.
	Count, Forbidden int
}

// Key writes the resource of r as `kubectl get` takes it, or its URL.
func (r Request) Key() string {
	if r.URL != "" {
		return r.URL
	}
	return resourceKey(r.Group, r.Resource)
}

// ReadLog reads the requests of user from an audit log: JSON lines of
// audit.k8s.io/v1 Events, as kube-apiserver writes them with
// --audit-log-format=json (pkg/testenv's Options.Audit). Each request
// counts once, whatever the stages it was logged at; a server-side apply
// that created its object counts as a create too, as the API server
// authorizes it. The requests are sorted.
func ReadLog(r io.Reader, user string) ([]Request, error) {
	seen := map[string]bool{}
	byKey := map[Request]*Request{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var ev auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("rbacaudit: line %d of the audit log is no audit event (%w); pass the log kube-apiserver writes with --audit-log-format=json", line, err)
		}
		if ev.User.Username != user || ev.Stage == auditv1.StageRequestReceived || seen[string(ev.AuditID)] {
			continue
		}
		seen[string(ev.AuditID)] = true
		for _, key := range requestsOf(&ev) {
			r := byKey[key]
			if r == nil {
				r = &Request{}
				*r = key
				byKey[key] = r
			}
			r.Count++
			if ev.ResponseStatus != nil && ev.ResponseStatus.Code == 403 {
				r.Forbidden++
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("rbacaudit: read the audit log: %w", err)
	}
	out := make([]Request, 0, len(byKey))
	for _, r := range byKey {
		out = append(out, *r)
	}
	sortRequests(out)
	return out, nil
}

// requestsOf are the requests ev stands for: its own and, for a patch
// that created its object (a server-side apply answered 201), the create
// the API server authorized it as.
func requestsOf(ev *auditv1.Event) []Request {
	r := requestOf(ev)
	if r.Verb == "patch" && ev.ResponseStatus != nil && ev.ResponseStatus.Code == 201 {
		c := r
		c.Verb = "create"
		return []Request{r, c}
	}
	return []Request{r}
}

// requestOf is the request of ev, without its counts.
func requestOf(ev *auditv1.Event) Request {
	if ev.ObjectRef == nil {
		path := ev.RequestURI
		if u, err := url.ParseRequestURI(ev.RequestURI); err == nil {
			path = u.Path
		}
		return Request{Verb: ev.Verb, URL: path}
	}
	o := ev.ObjectRef
	res := o.Resource
	if o.Subresource != "" {
		res += "/" + o.Subresource
	}
	return Request{Verb: ev.Verb, Group: o.APIGroup, Resource: res, Namespace: o.Namespace, Name: o.Name}
}

func sortRequests(rs []Request) {
	sort.Slice(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Key() != b.Key() {
			return a.Key() < b.Key()
		}
		if a.Verb != b.Verb {
			return a.Verb < b.Verb
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}
