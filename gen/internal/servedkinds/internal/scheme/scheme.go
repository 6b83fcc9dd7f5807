// Package scheme reads the table of package servedkinds from client-go's
// scheme, for the command that writes it and the test that checks it.
package scheme

import (
	"sort"
	"strings"

	"k8s.io/client-go/kubernetes/scheme"
)

// Table returns the kinds of client-go's scheme by group and version,
// sorted, lists and options left out.
func Table() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if strings.HasSuffix(gvk.Kind, "List") || strings.HasSuffix(gvk.Kind, "Options") || gvk.Version == "__internal" {
			continue
		}
		if out[gvk.Group] == nil {
			out[gvk.Group] = map[string][]string{}
		}
		out[gvk.Group][gvk.Version] = append(out[gvk.Group][gvk.Version], gvk.Kind)
	}
	for _, versions := range out {
		for _, kinds := range versions {
			sort.Strings(kinds)
		}
	}
	return out
}
