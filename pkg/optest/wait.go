package optest

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/opgen-sdk/opgen/apis"
)

// Getter reads one object, such as a typed client's Get bound to a name:
//
//	func(ctx context.Context) (*hellov1.Greeting, error) {
//		return client.HelloV1().Greetings(ns).Get(ctx, "world", metav1.GetOptions{})
//	}
type Getter[T any] func(context.Context) (T, error)

// WaitOption changes one wait: Within.
type WaitOption func(*waitOptions)

type waitOptions struct{ timeout time.Duration }

// Within bounds one wait by d instead of WaitTimeout.
func Within(d time.Duration) WaitOption { return func(o *waitOptions) { o.timeout = d } }

func timeoutOf(opts []WaitOption) time.Duration {
	o := waitOptions{timeout: WaitTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	return o.timeout
}

// Eventually polls cond until it holds, failing t after WaitTimeout (or
// Within's time) with what it waited for and cond's last error.
func Eventually(t testing.TB, what string, cond func(context.Context) (bool, error), opts ...WaitOption) {
	t.Helper()
	if err := poll(what, timeoutOf(opts), cond); err != nil {
		t.Fatal(err)
	}
}

// Consistently checks that cond holds, every 20ms for d, and fails t the
// first time it does not, with what should have held and cond's error.
// It is how a test says that something does not happen: no second Job, no
// write, no condition turning False.
func Consistently(t testing.TB, what string, d time.Duration, cond func(context.Context) (bool, error)) {
	t.Helper()
	start := time.Now()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
		ok, err := cond(ctx)
		cancel()
		switch {
		case err != nil:
			t.Fatalf("%s did not hold after %s: %v", what, time.Since(start).Round(time.Millisecond), err)
		case !ok:
			t.Fatalf("%s did not hold after %s", what, time.Since(start).Round(time.Millisecond))
		case time.Since(start) >= d:
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// attemptTimeout bounds one try of a wait.
const attemptTimeout = 10 * time.Second

func poll(what string, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	var last error
	start := time.Now()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true,
		func(ctx context.Context) (bool, error) {
			// Each try gets its own time, not what is left of the wait's:
			// a try cut by the wait's deadline (or refused by the client's
			// rate limiter for it) would hide the reason the wait failed.
			try, cancel := context.WithTimeout(context.WithoutCancel(ctx), attemptTimeout)
			defer cancel()
			ok, err := cond(try)
			if err != nil {
				last = err
				return false, nil
			}
			return ok, nil
		})
	if err == nil {
		return nil
	}
	if last != nil {
		return fmt.Errorf("waited %s in vain for %s; last error: %v", time.Since(start).Round(time.Millisecond), what, last)
	}
	return fmt.Errorf("waited %s in vain for %s", time.Since(start).Round(time.Millisecond), what)
}

// WaitFor polls get until the object exists and match holds for it, and
// returns it; what names the wait in the failure.
func WaitFor[T any](t testing.TB, what string, get Getter[T], match func(T) bool, opts ...WaitOption) T {
	t.Helper()
	var got T
	Eventually(t, what, func(ctx context.Context) (bool, error) {
		obj, err := get(ctx)
		if err != nil {
			return false, err
		}
		got = obj
		return match == nil || match(obj), nil
	}, opts...)
	return got
}

// WaitForCondition waits until the object's status condition typ is True
// and observed at its current generation, and returns the object.
func WaitForCondition[T apis.ConditionsObject](t testing.TB, get Getter[T], typ string, opts ...WaitOption) T {
	t.Helper()
	var got T
	var seen string
	err := poll("condition "+typ+"=True", timeoutOf(opts), func(ctx context.Context) (bool, error) {
		obj, err := get(ctx)
		if err != nil {
			return false, err
		}
		got = obj
		c := findCondition(obj.GetConditions(), typ)
		if c == nil {
			seen = fmt.Sprintf("%s/%s has no %s condition", obj.GetNamespace(), obj.GetName(), typ)
			return false, nil
		}
		seen = fmt.Sprintf("%s/%s: %s=%s (%s: %s), observed generation %d of %d", obj.GetNamespace(), obj.GetName(),
			typ, c.Status, c.Reason, c.Message, c.ObservedGeneration, obj.GetGeneration())
		return c.Status == metav1.ConditionTrue && c.ObservedGeneration == obj.GetGeneration(), nil
	})
	if err != nil {
		t.Fatalf("%v; last seen: %s", err, seen)
	}
	return got
}

func findCondition(cs []metav1.Condition, typ string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}

// WaitForOwned waits until get returns an object with a controller owner
// reference to owner, and returns it: what the controller of owner creates.
func WaitForOwned[T metav1.Object](t testing.TB, owner metav1.Object, get Getter[T], opts ...WaitOption) T {
	t.Helper()
	return WaitFor(t, fmt.Sprintf("an object owned by %s/%s", owner.GetNamespace(), owner.GetName()), get, func(obj T) bool {
		ref := metav1.GetControllerOf(obj)
		return ref != nil && ref.UID == owner.GetUID()
	}, opts...)
}

// WaitForDeletion waits until get answers NotFound; what names the object.
func WaitForDeletion[T any](t testing.TB, what string, get Getter[T], opts ...WaitOption) {
	t.Helper()
	Eventually(t, "the deletion of "+what, func(ctx context.Context) (bool, error) {
		_, err := get(ctx)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return false, nil
	}, opts...)
}
