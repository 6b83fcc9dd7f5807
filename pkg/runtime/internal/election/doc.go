// Package election holds a coordination.k8s.io Lease for one replica at a
// time. The operator's leader election and each sharded member's Lease
// use it. A standby takes a released lease at once; a holder that cannot
// renew in time stops its work before the lease expires for the others.
package election
