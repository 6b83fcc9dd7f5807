package gen

import (
	"bytes"
	"slices"
	"strings"
)

// SetLicense makes text, a Go comment such as a project's
// hack/boilerplate.go.txt, head every file the run generates: Go files
// and scaffolds as written, YAML files as # comments. It must be called
// before anything is staged.
func (o *Output) SetLicense(text string, yaml bool) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	o.goLicense = []byte(text + "\n\n")
	if !yaml {
		return
	}
	var y strings.Builder
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "/*" || line == "*/":
			continue
		case strings.HasPrefix(line, "//"):
			line = strings.TrimSpace(strings.TrimPrefix(line, "//"))
		case strings.HasPrefix(line, "/*"):
			line = strings.TrimSpace(strings.TrimPrefix(line, "/*"))
		}
		line = strings.TrimSpace(strings.TrimSuffix(line, "*/"))
		if line == "" {
			y.WriteString("#\n")
			continue
		}
		y.WriteString("# " + line + "\n")
	}
	o.yamlLicense = []byte(y.String())
}

// licensed puts the license before a generated Go file's text.
func (o *Output) licensed(src []byte) []byte {
	if len(o.goLicense) == 0 || bytes.HasPrefix(src, o.goLicense) {
		return src
	}
	return append(slices.Clone(o.goLicense), src...)
}

func withGoHeader(src []byte) []byte {
	if loc := anyGoHeader.FindIndex(src); loc != nil {
		return append(append(append([]byte(nil), src[:loc[0]]...), goHeader...), src[loc[1]:]...)
	}
	// Put the line before the package clause's doc, after build constraints.
	return append([]byte(goHeader+"\n\n"), src...)
}
