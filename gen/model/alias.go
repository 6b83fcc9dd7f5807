package model

import (
	"strconv"
	"strings"

	"github.com/opgen-sdk/opgen/internal/builtinkinds"
)

// reservedAliases are the import names generated code gives packages
// other than the API's: those of Kubernetes' API packages (builtinkinds.Builtin)
// and of apimachinery's metav1.
func reservedAliases() map[string]bool {
	out := map[string]bool{"metav1": true}
	for _, k := range builtinkinds.Builtin {
		out[k.Alias] = true
	}
	return out
}

// assignAliases gives every version of the API its import name (see
// Version.Alias): for each group in name order, the shortest prefix of its
// DNS labels that makes the name of each of its versions free; when even
// the whole group name is taken, a number is appended.
func assignAliases(api *API) {
	taken := reservedAliases()
	for _, g := range api.Groups {
		for i, name := range freeAlias(strings.Split(g.Name, "."), g.Versions, taken) {
			g.Versions[i].alias = name
			taken[name] = true
		}
	}
}

// freeAlias returns the names of versions of the group with labels: the
// shortest prefix of the labels that makes each of them free of taken,
// or the whole name and a number.
func freeAlias(labels []string, versions []*Version, taken map[string]bool) []string {
	for n := 1; ; n++ {
		names := make([]string, len(versions))
		free := true
		for i, v := range versions {
			names[i] = aliasOf(labels[:min(n, len(labels))], v.Name)
			if n > len(labels) {
				names[i] += strconv.Itoa(n - len(labels) + 1)
			}
			free = free && !taken[names[i]]
		}
		if free {
			return names
		}
	}
}

// aliasOf joins labels and the version into an identifier: lower case,
// letters and digits only.
func aliasOf(labels []string, version string) string {
	var b strings.Builder
	for _, l := range labels {
		b.WriteString(l)
	}
	b.WriteString(version)
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, strings.ToLower(b.String()))
}
