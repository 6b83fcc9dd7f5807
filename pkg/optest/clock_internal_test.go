package optest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The writes WaitSeen waits for are read from the path and the answer of
// each write.
func TestWriteOf(t *testing.T) {
	obj := func(kind string) []byte {
		return []byte(`{"kind":"` + kind + `","metadata":{"name":"x","namespace":"ns","resourceVersion":"42"},"details":{"name":"x","uid":"u"}}`)
	}
	at := func(group, resource, ns, rv string, uid types.UID) write {
		return write{schema.GroupResource{Group: group, Resource: resource}, metav1.ObjectMeta{Namespace: ns, Name: "x", ResourceVersion: rv, UID: uid}}
	}
	for _, c := range []struct {
		method, path, kind string
		want               write
		ok                 bool
	}{
		{"POST", "/api/v1/namespaces/ns/configmaps", "ConfigMap", at("", "configmaps", "ns", "42", ""), true},
		{"PUT", "/apis/batch/v1/namespaces/ns/jobs/x/status", "Job", at("batch", "jobs", "ns", "42", ""), true},
		{"PATCH", "/apis/example.com/v1/widgets/x", "Widget", at("example.com", "widgets", "ns", "42", ""), true},
		{"PUT", "/api/v1/namespaces/x/finalize", "Namespace", at("", "namespaces", "ns", "42", ""), true},
		{"DELETE", "/api/v1/namespaces/ns/configmaps/x", "Status", at("", "configmaps", "ns", "", "u"), true},
		{"DELETE", "/api/v1/namespaces/ns/configmaps", "ConfigMapList", write{}, false},
		{"POST", "/api/v1/namespaces/ns/pods/x/eviction", "Status", write{}, false},
		{"POST", "/version", "Info", write{}, false},
	} {
		got, ok := writeOf(c.method, c.path, obj(c.kind))
		assert.Equal(t, c.ok, ok, c.path)
		assert.Equal(t, c.want, got, c.path)
	}
}
