package servedkinds

// Kinds returns the kinds of a built-in group version, sorted, lists and
// options left out, and whether group is one of Kubernetes' groups ("" is
// the core group).
func Kinds(group, version string) ([]string, bool) {
	versions, ok := table[group]
	return versions[version], ok
}
