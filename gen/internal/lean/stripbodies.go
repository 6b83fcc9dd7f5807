package lean

// stripBodies: Go source without function bodies, for the lean syntax
// (lean.go), by a scanner that knows strings, comments and brackets.

// stripBodies returns src with the inside of every function body of a
// top-level declaration (or of a function literal outside braces, as in a
// var initializer) replaced by spaces, newlines kept, so that every
// position stays where it was. The type checker ignores function bodies;
// parsing them is most of the cost of parsing a package.
func stripBodies(src []byte) []byte {
	out := append([]byte(nil), src...)
	s := &bodyScanner{src: out}
	for s.i < len(out) {
		if s.skipNoise() {
			continue
		}
		c := out[s.i]
		switch {
		case c == '{':
			s.i = s.matching(s.i) + 1
		case isIdentStart(c):
			if s.ident() == "func" {
				s.funcHeader()
			}
		default:
			s.i++
		}
	}
	return out
}

// bodyScanner walks Go source, skipping comments and literals.
type bodyScanner struct {
	src []byte
	i   int
}

// skipNoise skips a comment, string, raw string or rune at i; it reports
// whether it did.
func (s *bodyScanner) skipNoise() bool {
	src, i := s.src, s.i
	switch {
	case src[i] == '/' && i+1 < len(src) && src[i+1] == '/':
		for i < len(src) && src[i] != '\n' {
			i++
		}
	case src[i] == '/' && i+1 < len(src) && src[i+1] == '*':
		i += 2
		for i+1 < len(src) && !(src[i] == '*' && src[i+1] == '/') {
			i++
		}
		i += 2
	case src[i] == '`':
		i++
		for i < len(src) && src[i] != '`' {
			i++
		}
		i++
	case src[i] == '"' || src[i] == '\'':
		q := src[i]
		i++
		for i < len(src) && src[i] != q && src[i] != '\n' {
			if src[i] == '\\' {
				i++
			}
			i++
		}
		i++
	default:
		return false
	}
	s.i = min(i, len(src))
	return true
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// ident reads the identifier at i.
func (s *bodyScanner) ident() string {
	start := s.i
	for s.i < len(s.src) && isIdentChar(s.src[s.i]) {
		s.i++
	}
	return string(s.src[start:s.i])
}

// funcHeader reads a function's signature, after its func keyword, and
// blanks out its body, if any: the first brace outside parentheses and
// brackets that does not open a struct or interface type.
func (s *bodyScanner) funcHeader() {
	depth := 0
	literal := false  // the next brace opens a struct or interface type
	last := byte('c') // the last byte of the last token: func's
	for s.i < len(s.src) {
		if s.skipNoise() {
			if s.src[s.i-1] == '"' || s.src[s.i-1] == '`' {
				last = '"'
			}
			continue
		}
		c := s.src[s.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
		case c == '\n':
			if depth == 0 && endsStatement(last) {
				return // a declaration without a body
			}
		case c == '{' && literal:
			s.i = s.matching(s.i)
			literal, last = false, '}'
		case c == '{' && depth == 0:
			open := s.i
			end := s.matching(open)
			for j := open + 1; j < end; j++ {
				if s.src[j] != '\n' {
					s.src[j] = ' '
				}
			}
			s.i = end + 1
			return
		case isIdentStart(c):
			id := s.ident()
			literal, last = id == "struct" || id == "interface", 'c'
			continue
		default:
			if c == '(' || c == '[' {
				depth++
			} else if c == ')' || c == ']' {
				depth--
			}
			if depth < 0 {
				return // a func type inside parentheses or brackets
			}
			last = c
		}
		s.i++
	}
}

// endsStatement reports whether a newline after a token that ends with
// last ends the statement, by Go's rule of semicolon insertion.
func endsStatement(last byte) bool {
	return isIdentChar(last) || last == ')' || last == ']' || last == '}' || last == '"'
}

// matching returns the index of the brace that closes the one at open.
func (s *bodyScanner) matching(open int) int {
	depth := 0
	s.i = open
	for s.i < len(s.src) {
		if s.skipNoise() {
			continue
		}
		switch s.src[s.i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s.i
			}
		}
		s.i++
	}
	return len(s.src) - 1
}
