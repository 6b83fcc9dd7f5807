package optest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/apis"
)

// Getter reads one object, such as a typed client's Get bound to a name:
//
//	func(ctx context.Context) (*hellov1.Greeting, error) {
//		return client.HelloV1().Greetings(ns).Get(ctx, "world", metav1.GetOptions{})
//	}
type Getter[T any] func(context.Context) (T, error)

// WaitOption changes one wait: Within, Every.
type WaitOption func(*waitOptions)

type waitOptions struct{ timeout, interval time.Duration }

// Within bounds one wait by d instead of WaitTimeout.
func Within(d time.Duration) WaitOption { return func(o *waitOptions) { o.timeout = d } }

// Every tries the condition every d instead of the wait's default: 20 ms
// for the waits that wait until something holds, 100 ms for Consistently.
// A Consistently over 10 s that reads from the API server every 500 ms
// makes 20 requests instead of 100.
func Every(d time.Duration) WaitOption { return func(o *waitOptions) { o.interval = d } }

func optionsOf(interval time.Duration, opts []WaitOption) waitOptions {
	o := waitOptions{timeout: WaitTimeout, interval: interval}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Saw records state as what the condition of a wait looked at, such as
// the object or the list it read; ctx is the context the wait gave the
// condition. When the wait fails, its message shows the last state
// recorded, as YAML without managedFields. WaitFor and the waits built on
// it record the object they read themselves.
func Saw(ctx context.Context, state any) {
	if l, ok := ctx.Value(lastKey{}).(*last); ok {
		l.state, l.at, l.set = state, time.Now(), true
	}
}

type lastKey struct{}

// last is what a wait's condition saw last.
type last struct {
	state any
	at    time.Time
	set   bool
	err   error
}

// describe says what the wait saw last, for its failure message.
func (l *last) describe(start time.Time) string {
	var b strings.Builder
	if l.err != nil {
		fmt.Fprintf(&b, "; last error: %v", l.err)
	}
	if l.set {
		fmt.Fprintf(&b, "; last state seen, %s after the start:\n%s", l.at.Sub(start).Round(time.Millisecond), stateYAML(l.state))
	}
	return b.String()
}

// maxState bounds the state a failure message shows.
const maxState = 4000

// stateYAML is state as YAML, without managedFields, cut at maxState.
func stateYAML(state any) string {
	data, err := json.Marshal(state)
	if err != nil {
		return fmt.Sprintf("%+v", state)
	}
	var m map[string]any
	if json.Unmarshal(data, &m) == nil {
		if md, ok := m["metadata"].(map[string]any); ok {
			delete(md, "managedFields")
			data, _ = json.Marshal(m)
		}
	}
	y, err := yaml.JSONToYAML(data)
	if err != nil {
		y = data
	}
	if len(y) > maxState {
		return fmt.Sprintf("%s... (%d bytes more)", y[:maxState], len(y)-maxState)
	}
	return string(y)
}

// Eventually polls cond until it holds, failing t after WaitTimeout (or
// Within's time) with what it waited for, how long, cond's last error and
// the last state cond recorded with Saw.
func Eventually(t testing.TB, what string, cond func(context.Context) (bool, error), opts ...WaitOption) {
	t.Helper()
	if err := poll(what, optionsOf(20*time.Millisecond, opts), cond); err != nil {
		t.Fatal(err)
	}
}

// Consistently checks that cond holds for d, every 100 ms (Every changes
// it), and fails t the first time it does not, with what should have
// held, after how long, cond's error and the last state cond recorded
// with Saw. It is how a test says that something does not happen: no
// second Job, no write, no condition turning False.
func Consistently(t testing.TB, what string, d time.Duration, cond func(context.Context) (bool, error), opts ...WaitOption) {
	t.Helper()
	o := optionsOf(100*time.Millisecond, opts)
	start := time.Now()
	l := &last{}
	for {
		ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), lastKey{}, l), attemptTimeout)
		ok, err := cond(ctx)
		cancel()
		l.err = err
		switch {
		case err != nil || !ok:
			t.Fatalf("%s did not hold after %s (checked every %s)%s", what, time.Since(start).Round(time.Millisecond), o.interval, l.describe(start))
		case time.Since(start) >= d:
			return
		}
		time.Sleep(o.interval)
	}
}

// attemptTimeout bounds one try of a wait.
const attemptTimeout = 10 * time.Second

func poll(what string, o waitOptions, cond func(context.Context) (bool, error)) error {
	l := &last{}
	start := time.Now()
	err := wait.PollUntilContextTimeout(context.Background(), o.interval, o.timeout, true,
		func(ctx context.Context) (bool, error) {
			// Each try gets its own time, not what is left of the wait's:
			// a try cut by the wait's deadline (or refused by the client's
			// rate limiter for it) would hide the reason the wait failed.
			try, cancel := context.WithTimeout(context.WithValue(context.WithoutCancel(ctx), lastKey{}, l), attemptTimeout)
			defer cancel()
			ok, err := cond(try)
			if err != nil {
				l.err = err
				return false, nil
			}
			return ok, nil
		})
	if err == nil {
		return nil
	}
	return fmt.Errorf("waited %s in vain for %s%s", time.Since(start).Round(time.Millisecond), what, l.describe(start))
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
		Saw(ctx, obj)
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
	err := poll("condition "+typ+"=True", optionsOf(20*time.Millisecond, opts), func(ctx context.Context) (bool, error) {
		obj, err := get(ctx)
		if err != nil {
			return false, err
		}
		got = obj
		Saw(ctx, obj)
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
		t.Fatal(strings.TrimPrefix(seen+": "+err.Error(), ": "))
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
		obj, err := get(ctx)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		Saw(ctx, obj)
		return false, nil
	}, opts...)
}
