package servedkinds

import "sync"

// table is the table of kinds by group and version, built once.
var table = sync.OnceValue(newTable)

// Kinds returns the kinds of a built-in group version, sorted, lists and
// options left out, and whether group is one of Kubernetes' groups ("" is
// the core group).
func Kinds(group, version string) ([]string, bool) {
	versions, ok := table()[group]
	return versions[version], ok
}
