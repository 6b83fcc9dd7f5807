package preview

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"

	"sigs.k8s.io/yaml"
)

// Report is what a preview found: the objects that would change, the
// Events that would be emitted and the actions that failed. Its JSON form
// is the document --preview-format=json prints, for tools.
type Report struct {
	// Objects would change, sorted by group, kind, namespace and name.
	Objects []Object `json:"objects"`
	// Events would be emitted, in the order they were.
	Events []string `json:"events"`
	// Failures are the actions that failed: what they would have written
	// after the failure is not known.
	Failures []string `json:"failures,omitempty"`
	Summary  Summary  `json:"summary"`
}

// Object is one object that would change, with every write to it merged.
type Object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Resource   string `json:"resource"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Verbs are the writes' verbs, in order: create, update, patch, delete.
	Verbs []string `json:"verbs"`
	// Fields are the fields that would change, before → after.
	Fields []Field `json:"fields,omitempty"`
}

// Summary counts what would change.
type Summary struct {
	Objects  int `json:"objects"`
	Writes   int `json:"writes"`
	Events   int `json:"events"`
	Failures int `json:"failures"`
	// Text is the summary line: "N objects would change, M writes, E events".
	Text string `json:"text"`
}

// Changed reports whether anything would change.
func (r Report) Changed() bool { return r.Summary.Writes > 0 || r.Summary.Events > 0 }

// Report returns what p recorded so far.
func (p *Preview) Report() Report {
	p.mu.Lock()
	changes := slices.Clone(p.changes)
	events := slices.Clone(p.events)
	failures := slices.Clone(p.failures)
	p.mu.Unlock()
	r := Report{Objects: merge(changes), Events: []string{}, Failures: failures}
	for _, e := range events {
		r.Events = append(r.Events, e.String())
	}
	slices.Sort(r.Failures)
	r.Summary = Summary{Objects: len(r.Objects), Writes: len(changes), Events: len(events), Failures: len(failures)}
	r.Summary.Text = fmt.Sprintf("%d objects would change, %d writes, %d events", r.Summary.Objects, r.Summary.Writes, r.Summary.Events)
	if len(failures) > 0 {
		r.Summary.Text += fmt.Sprintf("; %d actions failed", len(failures))
	}
	return r
}

// merge groups changes by object: the fields of later writes replace
// those of earlier ones, and a field back to its value before is none.
func merge(changes []Change) []Object {
	type id struct{ group, resource, namespace, name string }
	by := map[id]*Object{}
	fields := map[id]map[string]Field{}
	var order []id
	for _, c := range changes {
		k := id{c.Group, c.Resource, c.Namespace, c.Name}
		o := by[k]
		if o == nil {
			o = &Object{APIVersion: c.APIVersion, Kind: c.Kind, Resource: c.Resource, Namespace: c.Namespace, Name: c.Name}
			by[k], fields[k] = o, map[string]Field{}
			order = append(order, k)
		}
		o.Verbs = append(o.Verbs, c.Verb)
		if o.Kind == "" {
			o.APIVersion, o.Kind = c.APIVersion, c.Kind
		}
		for _, f := range c.Fields {
			if was, ok := fields[k][f.Path]; ok {
				f.Before = was.Before
			}
			fields[k][f.Path] = f
		}
	}
	out := make([]Object, 0, len(order))
	for _, k := range order {
		o := by[k]
		for _, f := range fields[k] {
			if !reflect.DeepEqual(f.Before, f.After) {
				o.Fields = append(o.Fields, f)
			}
		}
		slices.SortFunc(o.Fields, func(x, y Field) int { return cmp.Compare(x.Path, y.Path) })
		out = append(out, *o)
	}
	slices.SortFunc(out, func(x, y Object) int {
		return cmp.Or(cmp.Compare(x.APIVersion, y.APIVersion), cmp.Compare(x.Kind, y.Kind),
			cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
	})
	return out
}

// Write prints r to w as YAML (format "yaml" or "") or JSON ("json").
func (r Report) Write(w io.Writer, format string) error {
	var data []byte
	var err error
	switch format {
	case "json":
		data, err = json.MarshalIndent(r, "", "  ")
		data = append(data, '\n')
	case "", "yaml":
		data, err = yaml.Marshal(r)
	default:
		return fmt.Errorf("preview: unknown format %q; use yaml or json", format)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
