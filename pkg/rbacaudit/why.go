package rbacaudit

import (
	"slices"
	"strings"
)

// WhyLine is the comment line, in a role's YAML, that says why the role
// holds verbs on resources (or non-resource URLs): opgen generate writes
// one before each rule for each marker or derivation that asks for part
// of it, and ReadRoles reads them back.
//
//	# get, list, watch on deployments: +opgen:controller:owns=apps/v1.Deployment on Greeting: ... (apis/hello/v1/greeting_types.go:19)
func WhyLine(verbs, resources []string, why string) string {
	return "# " + strings.Join(verbs, ", ") + " on " + strings.Join(resources, ", ") + ": " + why
}

// why is one parsed WhyLine.
type why struct {
	verbs, resources []string
	text             string
}

// parseWhy reads a WhyLine, with or without its "# ".
func parseWhy(line string) (why, bool) {
	line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
	head, text, ok := strings.Cut(line, ": ")
	if !ok {
		return why{}, false
	}
	verbs, resources, ok := strings.Cut(head, " on ")
	if !ok {
		return why{}, false
	}
	return why{verbs: strings.Split(verbs, ", "), resources: strings.Split(resources, ", "), text: text}, true
}

func (w why) covers(verb, resource string) bool {
	return slices.Contains(w.verbs, verb) && slices.Contains(w.resources, resource)
}
