// Package shard spreads the objects of every controller over the
// replicas (Options.Sharding, docs/sharding.md). It uses what Kubernetes
// has: Leases for membership and for the assignment, a label per object,
// and label-selected watches.
//
//   - Each object is in one of Buckets buckets, a hash of its key. The
//     Sharder writes it once, as the label shard.opgen.dev/<operator>.
//     Owned objects carry their owner's. Where the API server applies shard
//     selectors (server.go), the bucket is a hash range of the UID, the
//     members select it through the server, and nothing is labelled.
//   - Each replica, a Member, holds a Lease of its own.
//   - The leader runs the Sharder. It labels new objects and assigns the
//     buckets to the live members (Ring.Owners, Plan). The assignment is an
//     annotation of the Lease <lease>-shards.
//   - A member caches and handles the buckets assigned to it (Informers),
//     and reports what it holds in its own Lease.
//   - A move between live members is a handover. The sharder drains the
//     bucket; the member stops starting actions on it, waits for those in
//     flight, drops its caches and reports it. Only then is the bucket
//     assigned again. No two members handle an object at once.
//   - A member stops working when it cannot renew its Lease, before the
//     Lease expires. Its buckets then move without a write to any object.
package shard
