// Package jsonscan finds the ends of JSON strings in a stream of bytes:
// the one step of framing JSON values that can jump instead of looking at
// every byte. The cache fill's filter and the watch decoder frame every
// event of a stream; the bytes of an event are mostly strings, which
// bytes.IndexByte crosses many bytes at a time.
package jsonscan

import "bytes"

// StringEnd returns the offset just after the closing quote of the JSON
// string whose content starts at b[i] (i is past the opening quote, or
// past an escaped byte), or -1 when b ends first. Then escaped reports
// whether b ends in the middle of an escape (an odd run of backslashes):
// the next byte of the stream is escaped, and the scan goes on past it.
func StringEnd(b []byte, i int) (end int, escaped bool) {
	for {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return -1, oddBackslashes(b, i, len(b))
		}
		k += i
		if !oddBackslashes(b, i, k) {
			return k + 1, false
		}
		i = k + 1 // an escaped quote
	}
}

// oddBackslashes reports whether b[from:to] ends in an odd run of
// backslashes.
func oddBackslashes(b []byte, from, to int) bool {
	n := 0
	for p := to - 1; p >= from && b[p] == '\\'; p-- {
		n++
	}
	return n%2 == 1
}
