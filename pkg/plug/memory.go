package plug

// Memory is per-object scratch space for steps: what a step remembers of
// one object between actions, such as the status ApplyStatus wrote last.
// The runtime keeps one per object while the object exists and hands the
// same one to every action on it (Action.Memory); one object is never
// handled twice at once, so steps need no locking. Keys are step names; a
// step must not touch another step's entry. Handlers keep their state in
// the object's status instead: memory is lost on restart and on leader
// change.
//
// The zero Memory is empty and ready to use; it holds no map until a step
// stores something, and none again once the last entry is deleted, so the
// objects that need no memory cost nothing.
type Memory struct{ m map[string]any }

// Get returns the entry of key, if any.
func (m *Memory) Get(key string) (any, bool) {
	v, ok := m.m[key]
	return v, ok
}

// Set stores v as the entry of key.
func (m *Memory) Set(key string, v any) {
	if m.m == nil {
		m.m = map[string]any{}
	}
	m.m[key] = v
}

// Delete removes the entry of key.
func (m *Memory) Delete(key string) {
	delete(m.m, key)
	if len(m.m) == 0 {
		m.m = nil
	}
}

// Len returns the number of entries.
func (m *Memory) Len() int { return len(m.m) }
