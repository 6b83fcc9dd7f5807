package task_test

import (
	"context"
	"fmt"
	"time"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/task"
)

// A periodic task with a state: it counts its runs and stops after three.
func ExampleRegister() {
	op, err := runtime.New(env.Config, runtime.Options{
		Name: "task-example", MetricsAddr: "0", HealthAddr: "0",
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true}, // tasks run on the leader only
	})
	if err != nil {
		panic(err)
	}
	tasks, err := task.NewRunner(op, task.Options{})
	if err != nil {
		panic(err)
	}
	done := make(chan struct{})
	err = task.Register(tasks, task.Task[int]{
		Name:       "count-to-three",
		Every:      10 * time.Millisecond,
		RunAtStart: true,
		State:      1,
		Run: func(_ context.Context, n int) (task.Result[int], error) {
			fmt.Println("run", n)
			if n == 3 {
				close(done)
				return task.Stop[int](), nil
			}
			return task.Continue(n + 1), nil
		},
	})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- op.Run(ctx) }()
	<-done
	stop()
	fmt.Println("Run:", <-ran)
	// Output:
	// run 1
	// run 2
	// run 3
	// Run: <nil>
}
