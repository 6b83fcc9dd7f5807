// Package fence keeps a replica that may no longer lead from writing.
//
// client-go's leader election does not fence: a leader that was paused
// (SIGSTOP, starvation, a partition) for longer than its lease wakes up
// believing it leads, and its workers act on what they had queued before
// its renewal loop finds the lease taken. A Fence closes the replica's
// writes from the moment its last successful renewal is older than the
// renew deadline, on the monotonic clock, until a renewal succeeds again:
// every mutating request of the operator's HTTP client (Client) is refused
// before it leaves the process, whatever code path made it, Events
// included. The lease requests themselves, and the reviews the secure
// metrics send, pass.
//
// The window it leaves is the time between the check and the request's
// bytes leaving the process (microseconds), plus the request's time on
// the wire: the standby takes the lease LeaseDuration after the last
// renewal, RenewDeadline after the fence closed, so a request sent before
// it closed arrives long before.
package fence

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Fence tracks how fresh the leases this replica works under are: its
// leader lease, and with sharding its member lease. A replica that never
// led, or runs without election, is not fenced.
type Fence struct {
	clock    clock.PassiveClock
	deadline time.Duration

	mu      sync.Mutex
	holders map[string]*holder
}

// holder is the state of one lease.
type holder struct {
	renewed time.Time
	// released says the replica stopped holding the lease: what it did
	// under it is over.
	released bool
}

// New returns a fence that closes deadline after a lease's last renewal.
func New(c clock.PassiveClock, deadline time.Duration) *Fence {
	return &Fence{clock: c, deadline: deadline, holders: map[string]*holder{}}
}

// Renewed records that an acquisition or a renewal of lease that started
// at start succeeded: the lease holds from start, as the record written
// then says.
func (f *Fence) Renewed(lease string, start time.Time) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.holders[lease]
	if h == nil || h.released {
		h = &holder{}
		f.holders[lease] = h
	}
	if start.After(h.renewed) {
		h.renewed = start
	}
}

// Released records that the replica stopped holding lease: it was given
// up or lost, and nothing is written under it any more.
func (f *Fence) Released(lease string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.holders[lease]; h != nil {
		h.released = true
	}
}

// Open returns nil when the replica may write, or a *ClosedError: a lease
// it holds was renewed longer than the renew deadline ago, or it stopped
// holding every lease it held.
func (f *Fence) Open() error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	held := 0
	for _, h := range f.holders {
		if h.released {
			continue
		}
		held++
		if age := f.clock.Since(h.renewed); age > f.deadline {
			return &ClosedError{Age: age, Deadline: f.deadline}
		}
	}
	if held == 0 && len(f.holders) > 0 {
		return &ClosedError{Released: true}
	}
	return nil
}

// ClosedError is the error of a write the fence refused: it was not sent.
type ClosedError struct {
	// Age is how old the last renewal was, against Deadline.
	Age, Deadline time.Duration
	// Released says the replica had stopped leading.
	Released bool
}

func (e *ClosedError) Error() string {
	if e.Released {
		return "not sent: this replica no longer leads"
	}
	return fmt.Sprintf("not sent: this replica may no longer lead (its last lease renewal is %s old, more than the renew deadline of %s); it writes again once it renewed the lease", e.Age.Round(time.Millisecond), e.Deadline)
}

// NotSent says the write did not leave the process: nothing of it was
// stored.
func (e *ClosedError) NotSent() bool { return true }

// IsClosed reports whether err is a write the fence refused.
func IsClosed(err error) bool {
	var c *ClosedError
	return errors.As(err, &c)
}

// Admit returns a *ClosedError for a mutating request that is not exempt
// while the fence is closed, and nil for every other request: the
// operator's transport (internal/transport) sends only what it admits.
func (f *Fence) Admit(r *http.Request) error {
	if !Mutating(r) || exempt(r) {
		return nil
	}
	return f.Open()
}

// Mutating reports whether r may change what the server stores.
func Mutating(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// exemptPaths are the API groups whose writes are not the leader's work:
// the lease itself (renewing it is how the fence opens again, and sharded
// members report through theirs) and the reviews that store nothing.
var exemptPaths = []string{"/apis/coordination.k8s.io/", "/apis/authentication.k8s.io/", "/apis/authorization.k8s.io/"}

func exempt(r *http.Request) bool {
	for _, p := range exemptPaths {
		if strings.HasPrefix(r.URL.Path, p) {
			return true
		}
	}
	return false
}
