package fleet

import (
	"slices"
	"sync"

	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// A Selector chooses the clusters a controller works in (In): it is
// given a cluster's name and whether it is the home cluster.
type Selector func(cluster string, home bool) bool

var (
	// HomeOnly selects the home cluster (Options.HomeCluster) alone.
	HomeOnly Selector = func(_ string, home bool) bool { return home }
	// MembersOnly selects every cluster but the home cluster.
	MembersOnly Selector = func(_ string, home bool) bool { return !home }
)

// Named selects the clusters of the given names.
func Named(names ...string) Selector {
	return func(cluster string, _ bool) bool { return slices.Contains(names, cluster) }
}

// In returns a setup that registers setup's controllers only in the
// clusters sel selects: in the others they do not run, watch or cache.
// An operator outside a fleet (runtime.Main) counts as the home cluster.
//
//	fleet.Main(opts, fleet.Setups(
//		fleet.In(fleet.HomeOnly, controller.SetupShop),
//		fleet.In(fleet.MembersOnly, controller.SetupBranch),
//	))
func In(sel Selector, setup func(*runtime.Operator) error) func(*runtime.Operator) error {
	return func(op *runtime.Operator) error {
		if !sel(op.Options().Cluster, isHome(op)) {
			return nil
		}
		return setup(op)
	}
}

// Setups returns a setup that calls each of setups in turn, until one
// fails.
func Setups(setups ...func(*runtime.Operator) error) func(*runtime.Operator) error {
	return func(op *runtime.Operator) error {
		for _, s := range setups {
			if err := s(op); err != nil {
				return err
			}
		}
		return nil
	}
}

// homes are the operators of home clusters that fleets run now.
var homes sync.Map // *runtime.Operator → struct{}

// isHome reports whether op works in its fleet's home cluster, or in no
// fleet.
func isHome(op *runtime.Operator) bool {
	if op.Options().Cluster == "" {
		return true
	}
	_, ok := homes.Load(op)
	return ok
}
