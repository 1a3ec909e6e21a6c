package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"
)

// ErrNotSupported: the client library does not implement the feature
// asked for (cluster membership with sarama).
var ErrNotSupported = errors.New("kafka: not supported by this client; use the franz-go client (--kafka-client=franz)")

// Membership is implemented by clients that can make a server a member of
// a cluster of servers sharing a service id. Type-assert a Client to it.
type Membership interface {
	// Join joins the group opts.Group and keeps the membership alive in
	// the background until the returned Member is closed. It returns once
	// the join started; assignments arrive through opts.OnAssign.
	Join(ctx context.Context, opts MemberOptions) (Member, error)
}

// MemberOptions configure a cluster membership.
type MemberOptions struct {
	// Group is the consumer group the servers of one cluster join.
	Group string
	// Topic is a topic every member subscribes to; the group reads none of
	// it (the balancer assigns slots, not partitions). The engine passes
	// its command log.
	Topic string
	// Address is this server's advertised address: where the other
	// servers forward the pull queries whose keys it owns.
	Address string
	// InstanceID, when set, makes the membership static (KIP-345): a
	// server restarting with the same id within the session timeout takes
	// its slots back without a rebalance.
	InstanceID string
	// SessionTimeout is how long the group waits for a silent member
	// before moving its slots; 6s when zero.
	SessionTimeout time.Duration
	// Slots returns how many slots this member needs: the largest
	// partition count among the topics its queries read. Called at each
	// join; the plan has as many slots as the largest answer.
	Slots func() int32
	// OnRevoke is called before the member rejoins the group, from the
	// group's goroutine: it must stop every piece of work the member owns
	// (the rejoin waits for it, up to the rebalance timeout).
	OnRevoke func()
	// OnAssign is called with each new assignment, from the group's
	// goroutine; it must not block for long (heartbeats wait).
	OnAssign func(Assignment)
}

// Member is a live cluster membership.
type Member interface {
	// Rebalance asks for a new assignment, as when the slots this member
	// needs changed.
	Rebalance()
	// Close leaves the group (its slots move at once) and waits for the
	// background work to end. Safe to call twice.
	Close()
}

// Assignment is one generation's plan: which member owns each slot.
// Partition p of every topic of every persistent query belongs to slot
// p mod len(Owners), so co-partitioned tasks stay on one server.
type Assignment struct {
	// Generation counts the assignments this member received: it grows
	// with each one.
	Generation int32
	// Owners are the advertised addresses of the slots' owners, indexed by
	// slot.
	Owners []string
	// Mine are the slots of this member, sorted.
	Mine []int32
}

// Owns reports whether this member owns partition p.
func (a Assignment) Owns(p int32) bool {
	if len(a.Owners) == 0 {
		return false
	}
	_, ok := slices.BinarySearch(a.Mine, p%int32(len(a.Owners)))
	return ok
}

// Owner returns the advertised address of the owner of partition p, or ""
// when there is no plan.
func (a Assignment) Owner(p int32) string {
	if len(a.Owners) == 0 || p < 0 {
		return ""
	}
	return a.Owners[p%int32(len(a.Owners))]
}

// Addresses returns the distinct addresses of the slots' owners, sorted.
func (a Assignment) Addresses() []string {
	out := slices.Clone(a.Owners)
	slices.Sort(out)
	return slices.Compact(out)
}

// ClusterProtocol is the name of the group protocol of Sluice's servers.
const ClusterProtocol = "sluice-slots"

// memberMeta is what a member sends in its JoinGroup metadata.
type memberMeta struct {
	Version int     `json:"v"`
	Address string  `json:"address"`
	Slots   int32   `json:"slots"`
	Owned   []int32 `json:"owned,omitempty"`
}

// memberAssignment is what each member receives in its SyncGroup
// assignment: the whole map, and its own slots.
type memberAssignment struct {
	Version int      `json:"v"`
	Owners  []string `json:"owners"`
	Mine    []int32  `json:"mine"`
}

// planSlots assigns slots 0..n-1 (n the largest number of slots a member
// asks for, at least 1) to members: balanced by count (no member has two
// more than another), and sticky: a member keeps the slots it owned, up
// to its share. It returns the member index owning each slot.
func planSlots(members []memberMeta) []int {
	var n int32 = 1
	for _, m := range members {
		n = max(n, m.Slots)
	}
	owner := make([]int, n)
	for i := range owner {
		owner[i] = -1
	}
	if len(members) == 0 {
		return owner
	}
	// Which previously owned slots each member may keep: the first claim
	// of a slot wins (a stale claim from an earlier plan loses).
	kept := make([][]int32, len(members))
	claimed := make([]bool, n)
	for i, m := range members {
		for _, s := range m.Owned {
			if s >= 0 && s < n && !claimed[s] {
				claimed[s] = true
				kept[i] = append(kept[i], s)
			}
		}
	}
	// Shares: base each, one more for the n mod len members that keep
	// the most (ties by member order), so the fewest slots move.
	base, extra := int(n)/len(members), int(n)%len(members)
	order := make([]int, len(members))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(kept[order[a]]) > len(kept[order[b]]) })
	quota := make([]int, len(members))
	for rank, i := range order {
		quota[i] = base
		if rank < extra {
			quota[i]++
		}
	}
	count := make([]int, len(members))
	for i := range members {
		for _, s := range kept[i] {
			if count[i] < quota[i] {
				owner[s] = i
				count[i]++
			}
		}
	}
	for s := range owner {
		if owner[s] >= 0 {
			continue
		}
		best := -1
		for i := range members {
			if count[i] < quota[i] && (best < 0 || quota[i]-count[i] > quota[best]-count[best]) {
				best = i
			}
		}
		owner[s] = best
		count[best]++
	}
	return owner
}

// encodePlan returns each member's assignment bytes for a plan.
func encodePlan(members []memberMeta, owner []int) [][]byte {
	addrs := make([]string, len(owner))
	mine := make([][]int32, len(members))
	for s, i := range owner {
		addrs[s] = members[i].Address
		mine[i] = append(mine[i], int32(s))
	}
	out := make([][]byte, len(members))
	for i := range members {
		b, err := json.Marshal(memberAssignment{Version: 1, Owners: addrs, Mine: mine[i]})
		if err != nil {
			panic(fmt.Sprintf("kafka: encode slot plan: %v", err)) // strings and ints only
		}
		out[i] = b
	}
	return out
}

func decodeAssignment(gen int32, b []byte) (Assignment, error) {
	if len(b) == 0 {
		return Assignment{Generation: gen}, nil
	}
	var ma memberAssignment
	if err := json.Unmarshal(b, &ma); err != nil {
		return Assignment{}, fmt.Errorf("kafka: cluster assignment: %w", err)
	}
	slices.Sort(ma.Mine)
	return Assignment{Generation: gen, Owners: ma.Owners, Mine: ma.Mine}, nil
}

// slotState is what a member remembers between joins: the slots it owns,
// for stickiness.
type slotState struct {
	mu    sync.Mutex
	owned []int32
}

func (s *slotState) set(a Assignment) {
	s.mu.Lock()
	s.owned = slices.Clone(a.Mine)
	s.mu.Unlock()
}

func (s *slotState) get() []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.owned)
}
