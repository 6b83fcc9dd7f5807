package ctrlbridge_test

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/ctrlbridge"
)

// The main of a kubebuilder project that moves its controllers to opgen:
// the manager it had, the operator added to it, the opgen controllers
// registered by the generated Setup, one Start for both.
func ExampleNew() {
	log := ctrl.Log.WithName("setup")
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		LeaderElection:   true,
		LeaderElectionID: "guestbook.example.com",
	})
	if err != nil {
		log.Error(err, "Failed to start manager")
		os.Exit(1)
	}
	// ... the reconcilers that stay in controller-runtime: SetupWithManager(mgr)
	op, err := ctrlbridge.New(mgr, runtime.Options{Name: "guestbook"})
	if err != nil {
		log.Error(err, "Failed to host the opgen operator")
		os.Exit(1)
	}
	_ = op // controller.Setup(op): the generated glue of the opgen controllers
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "Failed to run manager")
		os.Exit(1)
	}
}
