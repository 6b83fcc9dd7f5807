package external_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/pkg/external"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// record is a resource of the fake external system.
type record struct {
	Message string `json:"message"`
	Size    int32  `json:"size"`
}

// recordServer is the fake external system: a small JSON CRUD API of
// records at /records/<namespace>/<name>, with a switch that makes every
// request fail with 500.
type recordServer struct {
	*httptest.Server
	failing atomic.Bool
	mu      sync.Mutex
	records map[string]record
	writes  []string // "METHOD key"
}

func newRecordServer() *recordServer {
	s := &recordServer{records: map[string]record{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *recordServer) serve(w http.ResponseWriter, r *http.Request) {
	if s.failing.Load() {
		http.Error(w, "the external system is down", http.StatusInternalServerError)
		return
	}
	key := strings.TrimPrefix(r.URL.Path, "/records/")
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodGet {
		s.writes = append(s.writes, r.Method+" "+key)
	}
	rec, exists := s.records[key]
	switch r.Method {
	case http.MethodGet:
		if !exists {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(rec)
	case http.MethodPost, http.MethodPut:
		if (r.Method == http.MethodPost) == exists {
			http.Error(w, "conflict", http.StatusConflict)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&rec); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.records[key] = rec
	case http.MethodDelete:
		delete(s.records, key)
	}
}

func (s *recordServer) get(key string) (record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.records[key]
	return r, ok
}

func (s *recordServer) writeCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.writes)
}

// recordClient is the client Configure builds.
type recordClient struct {
	base string
	http *http.Client
}

func (c recordClient) do(ctx context.Context, method string, g *testapi.Gadget, body any) (*http.Response, error) {
	var buf bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&buf).Encode(body); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/records/"+g.Namespace+"/"+g.Name, &buf)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotFound {
		resp.Body.Close()
		return nil, fmt.Errorf("%s %s: %s", method, req.URL.Path, resp.Status)
	}
	return resp, nil
}

// records is the Reconciler under test: a Gadget's spec is a record.
type records struct{ server *recordServer }

var _ external.Reconciler[*testapi.Gadget, recordClient, record] = records{}

func (r records) Configure(context.Context, *testapi.Gadget) (recordClient, error) {
	return recordClient{base: r.server.URL, http: r.server.Client()}, nil
}

func (records) Read(ctx context.Context, c recordClient, g *testapi.Gadget) (record, bool, error) {
	resp, err := c.do(ctx, http.MethodGet, g, nil)
	if err != nil {
		return record{}, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return record{}, false, nil
	}
	var rec record
	return rec, true, json.NewDecoder(resp.Body).Decode(&rec)
}

func (records) Diff(g *testapi.Gadget, actual record) external.Diff {
	var changes []string
	if g.Spec.Message != actual.Message {
		changes = append(changes, fmt.Sprintf("message %q → %q", actual.Message, g.Spec.Message))
	}
	if g.Spec.Size != actual.Size {
		changes = append(changes, fmt.Sprintf("size %d → %d", actual.Size, g.Spec.Size))
	}
	return external.Diff{NeedUpdate: len(changes) > 0, Changes: changes}
}

func (records) Create(ctx context.Context, c recordClient, g *testapi.Gadget) (external.Result, error) {
	return external.Done(), closeBody(c.do(ctx, http.MethodPost, g, record{Message: g.Spec.Message, Size: g.Spec.Size}))
}

func (records) Update(ctx context.Context, c recordClient, g *testapi.Gadget, _ record) (external.Result, error) {
	return external.Done(), closeBody(c.do(ctx, http.MethodPut, g, record{Message: g.Spec.Message, Size: g.Spec.Size}))
}

func (records) Delete(ctx context.Context, c recordClient, g *testapi.Gadget, _ record) (external.Result, error) {
	return external.Done(), closeBody(c.do(ctx, http.MethodDelete, g, nil))
}

func closeBody(resp *http.Response, err error) error {
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func namespace(prefix string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
}
