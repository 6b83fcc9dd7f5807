// Package fieldset tells from a cache whether a server-side apply would
// change nothing. The API server records in the applier's managedFields
// entry exactly the fields of the body it applied. Another writer that
// changes one of those fields takes it out of the entry. So when the entry
// holds the field set of the body, and the object carries the body's hash,
// nothing the body declares has drifted.
package fieldset

import (
	"fmt"
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
// kinds would add 0.4 MB to every operator's binary, and parsing it took
// 135 ms and 20 MiB of garbage, where reading and parsing the server's
// api/v1 takes about 40 ms and 17 MiB.) A failed read is tried again after
// retryAfter: the API server publishes a new CRD's schema a moment after
// it serves the resource. It is safe for concurrent use.
type Schemas struct {
	openapi openapi.Client // nil: no schema, every Of fails

	mu   sync.Mutex
	byGV map[schema.GroupVersion]converter
}

type converter struct {
	tc  managedfields.TypeConverter
	err error
	at  time.Time // when err was read
}

// retryAfter is how long a failed schema read stands before the next try.
const retryAfter = 10 * time.Second

// NewSchemas returns the schemas of every kind the API server serves.
// It reads nothing until a kind's schema is needed (Prepare, Of).
func NewSchemas(client openapi.Client) *Schemas {
	return &Schemas{openapi: client, byGV: map[schema.GroupVersion]converter{}}
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
	defer s.mu.Unlock()
	c, ok := s.byGV[gv]
	if !ok || (c.err != nil && time.Since(c.at) > retryAfter) {
		c.tc, c.err = s.fetch(gv)
		c.at = time.Now()
		s.byGV[gv] = c
	}
	return c.tc, c.err
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
	return managedfields.NewTypeConverter(doc.Components.Schemas, false)
}
