// Package fieldset tells from a cache whether a server-side apply would
// change nothing. The API server records in the applier's managedFields
// entry exactly the fields of the body it applied. Another writer that
// changes one of those fields takes it out of the entry. So when the entry
// holds the field set of the body, and the object carries the body's hash,
// nothing the body declares has drifted.
package fieldset

import (
	"fmt"
	neturl "net/url"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/openapi"
	"k8s.io/kube-openapi/pkg/spec3"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
)

// stripped are the fields the API server leaves out of every managedFields
// entry (k8s.io/apimachinery's managedfields stripMeta).
var stripped = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// Schemas turns bodies into the field sets the API server records for
// them, from the schema the API server publishes (OpenAPI v3), read once
// per group version: the schema the server applies with, for built-in and
// custom kinds alike. (client-go's compiled-in schema of the built-in
// kinds would add 1.4 MB to the benchmark operator's binary, 1.0 MB
// stripped.)
//
// A group version's schema is read at most once at a time: a caller that
// needs it while it is being read waits for that read, and a caller that
// needs another group version does not wait at all. A failed read is
// tried again after a backoff that starts at firstRetry and doubles up to
// retryAfter: the API server publishes a new CRD's schema a moment after
// it serves the resource, and a server that is not ready yet is asked
// again soon, not hammered. It is safe for concurrent use.
type Schemas struct {
	openapi openapi.Client // nil: no schema, every Of fails

	mu   sync.Mutex
	byGV map[schema.GroupVersion]*converter
}

// converter is the schema of one group version: read, being read, or
// failed.
type converter struct {
	tc       managedfields.TypeConverter // nil until read
	reading  chan struct{}               // closed when the read in flight ends; nil when none is
	err      error                       // of the last read, when it failed
	failures int                         // failed reads in a row
	retry    time.Time                   // no new read before it, after a failure
}

const (
	// firstRetry is how long the first failure of a schema read stands
	// before the next try; each failure in a row doubles it.
	firstRetry = 200 * time.Millisecond
	// retryAfter is the longest a failed schema read stands.
	retryAfter = 10 * time.Second
)

// NewSchemas returns the schemas of every kind the API server serves.
// It reads nothing until a kind's schema is needed (Prepare, Of).
func NewSchemas(client openapi.Client) *Schemas {
	return &Schemas{openapi: client, byGV: map[schema.GroupVersion]*converter{}}
}

// Of returns the hash of the field set the API server records for an
// apply of u (cachefill.FieldsHash of its FieldsV1).
func (s *Schemas) Of(u *unstructured.Unstructured) (uint64, error) {
	tc, err := s.converter(u.GroupVersionKind())
	if err != nil {
		return 0, err
	}
	tv, err := tc.ObjectToTyped(u)
	if err != nil {
		return 0, err
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		return 0, err
	}
	raw, err := set.Difference(stripped).ToJSON()
	if err != nil {
		return 0, err
	}
	return cachefill.FieldsHash(raw), nil
}

// Prepare reads the schema of gvk's group version now, so that the first
// Of does not wait for it. Call it where the read can overlap other work
// (the caches filling); it returns when done.
func (s *Schemas) Prepare(gvk schema.GroupVersionKind) {
	_, _ = s.converter(gvk) // a failure is kept and tried again by Of
}

func (s *Schemas) converter(gvk schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	if s.openapi == nil {
		return nil, fmt.Errorf("no schema of %s", gvk)
	}
	gv := gvk.GroupVersion()
	s.mu.Lock()
	c, ok := s.byGV[gv]
	if !ok {
		c = &converter{}
		s.byGV[gv] = c
	}
	for c.reading != nil { // another caller reads it: wait for that read
		reading := c.reading
		s.mu.Unlock()
		<-reading
		s.mu.Lock()
	}
	if c.tc != nil || (c.err != nil && time.Now().Before(c.retry)) {
		defer s.mu.Unlock()
		return c.tc, c.err
	}
	// Read it without holding s.mu: Of for other group versions goes on.
	reading := make(chan struct{})
	c.reading = reading
	s.mu.Unlock()
	tc, err := s.fetch(gv)
	s.mu.Lock()
	defer s.mu.Unlock()
	c.tc, c.err, c.reading = tc, err, nil
	close(reading)
	if err != nil {
		c.retry = time.Now().Add(backoff(c.failures))
		c.failures++
	} else {
		c.failures = 0
	}
	return tc, err
}

// backoff is how long the failures+1st failed read in a row stands.
func backoff(failures int) time.Duration {
	d := firstRetry
	for ; failures > 0 && d < retryAfter; failures-- {
		d *= 2
	}
	return min(d, retryAfter)
}

// parsed holds, for the whole process, the converter last built from each
// group version's schema, by the address the server publishes it at:
// that address carries the hash of the schema's content, so an equal
// address is an equal schema. Every operator of a process (several run in
// one test binary, or one binary hosts more than one) then reads and
// parses a group version's schema once, not once each: api/v1 is 1.6 MB
// of JSON, and its read and parse take 80 to 230 ms on a busy 2-core
// machine, which the first reconciles of an operator that started again
// would wait for. A group version keeps one entry, its latest schema.
var parsed = struct {
	mu     sync.Mutex
	byPath map[string]parsedSchema
}{byPath: map[string]parsedSchema{}}

type parsedSchema struct {
	url string // the server-relative address, with its hash
	tc  managedfields.TypeConverter
}

// shared returns the converter built from the schema at url, when there
// is one, and the key to store one under when the address is
// content-addressed (it carries a hash); key is "" when it is not.
func shared(url string) (tc managedfields.TypeConverter, key string) {
	u, err := neturl.Parse(url)
	if err != nil || u.Query().Get("hash") == "" {
		return nil, ""
	}
	parsed.mu.Lock()
	defer parsed.mu.Unlock()
	if p, ok := parsed.byPath[u.Path]; ok && p.url == url {
		return p.tc, u.Path
	}
	return nil, u.Path
}

func share(key, url string, tc managedfields.TypeConverter) {
	if key == "" {
		return
	}
	parsed.mu.Lock()
	parsed.byPath[key] = parsedSchema{url: url, tc: tc}
	parsed.mu.Unlock()
}

// fetch builds the converter of gv from the API server's OpenAPI v3.
func (s *Schemas) fetch(gv schema.GroupVersion) (managedfields.TypeConverter, error) {
	paths, err := s.openapi.Paths()
	if err != nil {
		return nil, err
	}
	path := "apis/" + gv.String()
	if gv.Group == "" {
		path = "api/" + gv.Version
	}
	gvSpec, ok := paths[path]
	if !ok {
		return nil, fmt.Errorf("the API server publishes no OpenAPI schema of %s", gv)
	}
	url := gvSpec.ServerRelativeURL()
	tc, key := shared(url)
	if tc != nil {
		return tc, nil
	}
	raw, err := gvSpec.Schema("application/json")
	if err != nil {
		return nil, err
	}
	var doc spec3.OpenAPI
	if err := doc.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	if doc.Components == nil {
		return nil, fmt.Errorf("the OpenAPI schema of %s has no components", gv)
	}
	tc, err = managedfields.NewTypeConverter(doc.Components.Schemas, false)
	if err != nil {
		return nil, err
	}
	share(key, url, tc)
	return tc, nil
}
