package watchjson

import "k8s.io/apimachinery/pkg/watch"

// peeked is what peekEvent reads of a watch event: its type, and the
// namespace, name and resourceVersion of its object, as slices of the
// event's bytes.
type peeked struct {
	typ                 watch.EventType
	namespace, name, rv []byte
}

// peekEvent reads the type of the watch event in frame and the
// namespace, name and resourceVersion of its object without decoding it.
// It fails on what it cannot read for sure (one of those values with an
// escape or given twice, a name or version missing, JSON it does not
// expect), and the caller then decodes the event.
func peekEvent(frame []byte) (peeked, bool) {
	var (
		p                  peeked
		typ                []byte
		haveType, haveMeta bool
		s                  = scanner{b: frame}
	)
	metadata := func(key []byte) bool {
		var dst *[]byte
		switch string(key) {
		case "name":
			dst = &p.name
		case "namespace":
			dst = &p.namespace
		case "resourceVersion":
			dst = &p.rv
		default:
			return s.skip()
		}
		if *dst != nil {
			return false
		}
		v, ok := s.str()
		*dst = v
		return ok
	}
	object := func(key []byte) bool {
		if string(key) != "metadata" {
			return s.skip()
		}
		if haveMeta {
			return false
		}
		haveMeta = true
		return s.object(metadata)
	}
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			if haveType {
				return false
			}
			var ok bool
			typ, ok = s.str()
			haveType = ok
			return ok
		case "object":
			return !haveMeta && s.object(object)
		}
		return s.skip()
	})
	if !ok || !haveType || len(p.name) == 0 || len(p.rv) == 0 {
		return peeked{}, false
	}
	switch p.typ = watch.EventType(typ); p.typ {
	case watch.Added, watch.Modified, watch.Deleted:
		return p, true
	}
	return peeked{}, false
}

// scanner reads the JSON of one watch event, as far as peekEvent needs.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// next consumes c, after white space, if it comes next.
func (s *scanner) next(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// object reads an object, calling member with each key and the scanner at
// the key's value, which member must consume.
func (s *scanner) object(member func(key []byte) bool) bool {
	if !s.next('{') {
		return false
	}
	if s.next('}') {
		return true
	}
	for {
		s.space()
		start := s.i + 1
		if s.i >= len(s.b) || s.b[s.i] != '"' || !s.skipString() {
			return false
		}
		// A key with an escape keeps it: it matches none of peekEvent's.
		key := s.b[start : s.i-1]
		if !s.next(':') || !member(key) {
			return false
		}
		if s.next('}') {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

// str reads a string without escapes.
func (s *scanner) str() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	for start := s.i; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '"':
			s.i++
			return s.b[start : s.i-1], true
		case '\\':
			return nil, false
		}
	}
	return nil, false
}

// skipString consumes the string that starts at s.i.
func (s *scanner) skipString() bool {
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return true
		}
	}
	return false
}

// skip consumes one value.
func (s *scanner) skip() bool {
	s.space()
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		return s.skipString()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if !s.skipString() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	}
	// A number, true, false or null.
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return s.i > start
		}
		s.i++
	}
	return false
}
