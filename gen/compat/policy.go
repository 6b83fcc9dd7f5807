package compat

import (
	"errors"
	"fmt"
	"go/token"
	"os"
	"path/filepath"

	yaml "go.yaml.in/yaml/v3"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/diag"
)

// Severity is what the gate does with the findings of a rule.
type Severity string

// The severities a policy file may give a rule.
const (
	// Error fails the run: the default of every rule but
	// description-changed.
	Error Severity = "error"
	// Warn reports the finding and lets the run pass.
	Warn Severity = "warn"
	// Off ignores the rule.
	Off Severity = "off"
)

// PolicyFile is the file of the released directory that sets the
// severity of rules:
//
//	# config/released/compat.yaml
//	rules:
//	  description-changed: warn
//	  composition-changed: off
//
// It lives beside the released CRDs because it is the project's policy,
// the same for go generate, opgen release and CI, and reviewed with the
// release; opgen release leaves it as it is.
const PolicyFile = "compat.yaml"

// Policy is the severity of each rule.
type Policy struct {
	// File is the policy file, relative to the project root; "" when the
	// project has none.
	File     string
	severity map[Rule]Severity
}

// DefaultSeverity is the severity of r in a project without a policy
// file: every rule fails the run but description-changed, which breaks
// nothing and is off.
func DefaultSeverity(r Rule) Severity {
	if r == DescriptionChanged {
		return Off
	}
	return Error
}

// Severity is the severity of r.
func (p *Policy) Severity(r Rule) Severity {
	if s, ok := p.severity[r]; ok {
		return s
	}
	return DefaultSeverity(r)
}

// LoadPolicy reads the policy file of the project's released directory.
// A project without one gets the defaults. Errors are positioned at the
// file's line.
func LoadPolicy(p *gen.Project) (*Policy, []*diag.Error) {
	path := filepath.Join(p.Abs(p.ReleasedDir), PolicyFile)
	out := &Policy{severity: map[Rule]Severity{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	out.File = filepath.ToSlash(relative(p.Root, path))
	pos := func(n *yaml.Node) token.Position {
		return token.Position{Filename: path, Line: n.Line, Column: n.Column}
	}
	if err != nil {
		return out, []*diag.Error{{Pos: token.Position{Filename: path}, Msg: err.Error()}}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return out, []*diag.Error{{Pos: token.Position{Filename: path}, Msg: fmt.Sprintf("%v: write it as rules: {<rule>: error|warn|off}", err)}}
	}
	if len(doc.Content) == 0 {
		return out, nil
	}
	return out, out.read(doc.Content[0], pos)
}

// read reads the document's mapping: rules, and nothing else.
func (p *Policy) read(root *yaml.Node, pos func(*yaml.Node) token.Position) []*diag.Error {
	usage := "write it as rules: {<rule>: error|warn|off} (go tool opgen help upgrading)"
	if root.Kind != yaml.MappingNode {
		return []*diag.Error{{Pos: pos(root), Msg: "not a mapping: " + usage}}
	}
	var errs []*diag.Error
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, value := root.Content[i], root.Content[i+1]
		if key.Value != "rules" || value.Kind != yaml.MappingNode {
			errs = append(errs, &diag.Error{Pos: pos(key), Msg: fmt.Sprintf("%q: %s", key.Value, usage)})
			continue
		}
		errs = append(errs, p.readRules(value, pos)...)
	}
	return errs
}

func (p *Policy) readRules(rules *yaml.Node, pos func(*yaml.Node) token.Position) []*diag.Error {
	var errs []*diag.Error
	for i := 0; i+1 < len(rules.Content); i += 2 {
		key, value := rules.Content[i], rules.Content[i+1]
		if !knownRule(key.Value) {
			errs = append(errs, &diag.Error{Pos: pos(key), Msg: fmt.Sprintf("unknown rule %q%s (rules: %s)", key.Value, suggest(key.Value), ruleNames())})
			continue
		}
		switch s := Severity(value.Value); s {
		case Error, Warn, Off:
			p.severity[Rule(key.Value)] = s
		default:
			errs = append(errs, &diag.Error{Pos: pos(value), Msg: fmt.Sprintf("%s: severity %q: write error, warn or off", key.Value, value.Value)})
		}
	}
	return errs
}
