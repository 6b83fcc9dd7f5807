package shard

import (
	"hash/fnv"
	"slices"
	"strconv"
)

// VirtualNodes is how many points each member has on the ring: enough
// that members' shares differ by a few percent, and that a member joining
// or leaving moves about 1/N of the objects.
const VirtualNodes = 128

type point struct {
	hash   uint64
	member string
}

// Ring assigns keys to members by consistent hashing. The zero Ring has no
// members. A Ring is immutable and safe for concurrent use.
type Ring struct {
	points []point
}

// NewRing returns the ring of members (duplicates count once), each with
// vnodes points (VirtualNodes when vnodes <= 0). The same members give the
// same ring in every process.
func NewRing(members []string, vnodes int) *Ring {
	if vnodes <= 0 {
		vnodes = VirtualNodes
	}
	ms := slices.Clone(members)
	slices.Sort(ms)
	ms = slices.Compact(ms)
	r := &Ring{points: make([]point, 0, len(ms)*vnodes)}
	for _, m := range ms {
		for i := range vnodes {
			r.points = append(r.points, point{hash: hash(m + "#" + strconv.Itoa(i)), member: m})
		}
	}
	slices.SortFunc(r.points, func(a, b point) int {
		switch {
		case a.hash < b.hash:
			return -1
		case a.hash > b.hash:
			return 1
		}
		if a.member < b.member {
			return -1
		}
		if a.member > b.member {
			return 1
		}
		return 0
	})
	return r
}

// Owner returns the member key belongs to: the first point at or after the
// key's hash, wrapping around; "" for a ring without members.
func (r *Ring) Owner(key string) string {
	if r == nil || len(r.points) == 0 {
		return ""
	}
	return r.points[r.search(hash(key))].member
}

// search returns the index of the first point at or after h, wrapping
// around.
func (r *Ring) search(h uint64) int {
	i, _ := slices.BinarySearchFunc(r.points, h, func(p point, h uint64) int {
		switch {
		case p.hash < h:
			return -1
		case p.hash > h:
			return 1
		}
		return 0
	})
	if i == len(r.points) {
		return 0
	}
	return i
}

// Members returns the ring's members, sorted.
func (r *Ring) Members() []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, p := range r.points {
		out = append(out, p.member)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// hash is FNV-1a 64 with a final mix (splitmix64's), so that keys that
// differ in their last bytes spread over the whole ring.
func hash(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
