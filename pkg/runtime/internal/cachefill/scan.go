package cachefill

import "github.com/opgen-sdk/opgen/pkg/runtime/internal/jsonscan"

// members calls fn with each member of the JSON object at v[i:]: its key
// (raw, without quotes), the offset of the key's opening quote and the
// bounds of its value, until fn returns false. It returns false if v is
// not well-formed there.
func members(v []byte, i int, fn func(key []byte, ks, vs, ve int) bool) bool {
	if i >= len(v) || v[i] != '{' {
		return false
	}
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == '}' {
		return true
	}
	for i < len(v) {
		if v[i] != '"' {
			return false
		}
		ks := i
		ke := skipString(v, i)
		if ke < 0 {
			return false
		}
		i = skipSpace(v, ke)
		if i >= len(v) || v[i] != ':' {
			return false
		}
		vs := skipSpace(v, i+1)
		ve := skipValue(v, vs)
		if ve < 0 {
			return false
		}
		if !fn(v[ks+1:ke-1], ks, vs, ve) {
			return true
		}
		i = skipSpace(v, ve)
		if i >= len(v) {
			return false
		}
		if v[i] == '}' {
			return true
		}
		if v[i] != ',' {
			return false
		}
		i = skipSpace(v, i+1)
	}
	return false
}

// elements calls fn with the bounds of each element of the JSON array at
// v[i:] until fn returns false.
func elements(v []byte, i int, fn func(es, ee int) bool) bool {
	if i >= len(v) || v[i] != '[' {
		return false
	}
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == ']' {
		return true
	}
	for i < len(v) {
		ee := skipValue(v, i)
		if ee < 0 {
			return false
		}
		if !fn(i, ee) {
			return true
		}
		i = skipSpace(v, ee)
		if i >= len(v) {
			return false
		}
		if v[i] == ']' {
			return true
		}
		if v[i] != ',' {
			return false
		}
		i = skipSpace(v, i+1)
	}
	return false
}

func skipSpace(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\n' || v[i] == '\t' || v[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset after the JSON string at v[i:], or -1.
func skipString(v []byte, i int) int {
	end, _ := jsonscan.StringEnd(v, i+1)
	return end
}

// skipValue returns the offset after the JSON value at v[i:], or -1.
func skipValue(v []byte, i int) int {
	if i >= len(v) {
		return -1
	}
	switch v[i] {
	case '"':
		return skipString(v, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(v); j++ {
			switch v[j] {
			case '"':
				e := skipString(v, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(v) {
			switch v[j] {
			case ',', '}', ']', ' ', '\n', '\t', '\r':
				return j
			}
			j++
		}
		return j
	}
}
