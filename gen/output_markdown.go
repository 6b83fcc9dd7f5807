package gen

import "bytes"

var markdownHeader = "<!-- " + Header + " -->"

// Markdown stages a generated Markdown document, headed by opgen's
// generated-code line as an HTML comment, which renderers hide.
func (o *Output) Markdown(path string, data []byte) {
	if !bytes.HasPrefix(data, []byte(markdownHeader)) {
		data = append([]byte(markdownHeader+"\n\n"), data...)
	}
	o.put(path, data)
}
