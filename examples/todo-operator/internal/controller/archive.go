package controller

import (
	"encoding/json"
	"sort"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
)

// The archive is one ConfigMap per namespace with an entry per deleted
// Todo, under the Todo's name. It can never outgrow a ConfigMap (1 MiB),
// or every later Delete would fail and no Todo of the namespace could go:
// an entry keeps at most MaxArchivedDescription bytes of the description,
// and when the entries would pass ArchiveBudget bytes, the oldest leave.
const (
	// ArchiveBudget bounds the bytes of the archive's keys and values,
	// well under the 1 MiB a ConfigMap holds, since its managedFields
	// list every key once more.
	ArchiveBudget = 256 << 10
	// MaxArchivedDescription is the most of a description, in bytes, that
	// an entry keeps.
	MaxArchivedDescription = 4096
)

// Entry is one archived Todo.
type Entry struct {
	Title       string       `json:"title"`
	Description string       `json:"description,omitempty"`
	Truncated   bool         `json:"truncated,omitempty"` // the description was cut
	State       todov1.State `json:"state"`
	DueDate     *metav1.Time `json:"dueDate,omitempty"`
	Overdue     bool         `json:"overdue,omitempty"`
	ArchivedAt  metav1.Time  `json:"archivedAt"`
}

// newEntry is t's entry, archived at now, its description cut to
// MaxArchivedDescription bytes on a character boundary.
func newEntry(t *todov1.Todo, now time.Time) Entry {
	e := Entry{Title: t.Spec.Title, Description: t.Spec.Description, State: t.Spec.State,
		DueDate: t.Spec.DueDate, Overdue: t.Status.Overdue, ArchivedAt: metav1.NewTime(now.UTC().Truncate(time.Second))}
	if len(e.Description) > MaxArchivedDescription {
		cut := MaxArchivedDescription
		for cut > 0 && !utf8.RuneStart(e.Description[cut]) {
			cut--
		}
		e.Description, e.Truncated = e.Description[:cut], true
	}
	return e
}

// archivePatch is the merge patch that adds value under key to cm and
// removes the oldest entries while the archive would pass ArchiveBudget.
// It carries cm's resourceVersion, so that it fails with a conflict
// rather than drop what another writer added meanwhile. It returns the
// keys removed.
func archivePatch(cm *corev1.ConfigMap, key, value string) ([]byte, []string, error) {
	size := len(key) + len(value)
	for k, v := range cm.Data {
		if k != key {
			size += len(k) + len(v)
		}
	}
	data := map[string]any{key: value}
	var evicted []string
	for _, k := range oldestFirst(cm.Data, key) {
		if size <= ArchiveBudget {
			break
		}
		data[k], size = nil, size-len(k)-len(cm.Data[k])
		evicted = append(evicted, k)
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": cm.ResourceVersion},
		"data":     data,
	})
	return patch, evicted, err
}

// oldestFirst returns the keys of data but skip, the oldest entry first
// (a value that is not an entry counts as oldest), by name when equal.
func oldestFirst(data map[string]string, skip string) []string {
	at := map[string]time.Time{}
	keys := make([]string, 0, len(data))
	for k, v := range data {
		if k == skip {
			continue
		}
		var e Entry
		if json.Unmarshal([]byte(v), &e) == nil {
			at[k] = e.ArchivedAt.Time
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if !at[keys[i]].Equal(at[keys[j]]) {
			return at[keys[i]].Before(at[keys[j]])
		}
		return keys[i] < keys[j]
	})
	return keys
}
