package controller

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
)

// TestEntryCutsTheDescription: an entry keeps at most
// MaxArchivedDescription bytes of a description, cut between characters.
func TestEntryCutsTheDescription(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 2, 3, 4, 5, 600, time.UTC)
	todo := &todov1.Todo{Spec: todov1.TodoSpec{Title: "T", Description: strings.Repeat("€", MaxArchivedDescription)}} // 3 bytes each
	e := newEntry(todo, now)
	assert.True(t, e.Truncated)
	assert.LessOrEqual(t, len(e.Description), MaxArchivedDescription)
	assert.Greater(t, len(e.Description), MaxArchivedDescription-3)
	assert.True(t, utf8.ValidString(e.Description), "cut between characters")
	assert.Equal(t, now.Truncate(time.Second), e.ArchivedAt.Time)

	todo.Spec.Description = "short"
	e = newEntry(todo, now)
	assert.False(t, e.Truncated)
	assert.Equal(t, "short", e.Description)
}

// TestPatchEvictsTheOldest: the patch adds the entry and removes the
// oldest entries, and only them, until the archive fits its budget; it
// carries the resourceVersion read.
func TestPatchEvictsTheOldest(t *testing.T) {
	t.Parallel()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "42"}, Data: map[string]string{}}
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	big := strings.Repeat("x", 4000)
	size := 0
	for i := 0; size <= ArchiveBudget; i++ {
		v, err := json.Marshal(Entry{Title: "old", Description: big, ArchivedAt: metav1.NewTime(base.Add(time.Duration(i) * time.Minute))})
		require.NoError(t, err)
		k := fmt.Sprintf("todo-%03d", i)
		cm.Data[k] = string(v)
		size += len(k) + len(v)
	}
	cm.Data["not-an-entry"] = "left by someone"
	value := `{"title":"new"}`
	patch, evicted, err := archivePatch(cm, "new", value)
	require.NoError(t, err)
	assert.Equal(t, []string{"not-an-entry", "todo-000"}, evicted, "what is not an entry goes first, then the oldest, no more than needed")

	var p struct {
		Metadata struct{ ResourceVersion string }
		Data     map[string]*string
	}
	require.NoError(t, json.Unmarshal(patch, &p))
	assert.Equal(t, "42", p.Metadata.ResourceVersion)
	assert.Equal(t, value, *p.Data["new"])
	after := len("new") + len(value)
	for k, v := range cm.Data {
		if _, removed := p.Data[k]; !removed {
			after += len(k) + len(v)
		}
	}
	assert.LessOrEqual(t, after, ArchiveBudget)

	_, evicted, err = archivePatch(&corev1.ConfigMap{Data: map[string]string{"a": "{}"}}, "b", "{}")
	require.NoError(t, err)
	assert.Empty(t, evicted, "under the budget nothing leaves")
}
