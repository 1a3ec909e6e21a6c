package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Join implements Membership with a kgo group member that subscribes to
// opts.Topic but, through its own balancer, is assigned no partition of
// it: the plan assigns slots (see Assignment).
func (c *franzClient) Join(ctx context.Context, opts MemberOptions) (Member, error) {
	if c.life.isClosed() {
		return nil, ErrClosed
	}
	if opts.Group == "" || opts.Topic == "" {
		return nil, fmt.Errorf("kafka: join cluster: a group and a topic are required")
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 6 * time.Second
	}
	b := &slotBalancer{opts: opts}
	kopts := append(c.baseOpts("sluice-cluster"),
		kgo.ConsumerGroup(opts.Group),
		kgo.ConsumeTopics(opts.Topic),
		kgo.Balancers(b),
		kgo.SessionTimeout(opts.SessionTimeout),
		kgo.HeartbeatInterval(min(3*time.Second, opts.SessionTimeout/3)),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsRevoked(func(context.Context, *kgo.Client, map[string][]int32) { b.revoke() }),
		kgo.OnPartitionsLost(func(context.Context, *kgo.Client, map[string][]int32) { b.revoke() }),
	)
	if opts.InstanceID != "" {
		kopts = append(kopts, kgo.InstanceID(opts.InstanceID))
	}
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: join cluster: %w", err)
	}
	m := &franzMember{parent: c, cl: cl, done: make(chan struct{})}
	if err := c.life.add(m); err != nil {
		return nil, err
	}
	// kgo runs the group once the client polls: a poll that never returns
	// records (nothing is assigned) keeps it going until Close.
	go func() {
		defer close(m.done)
		for {
			fs := cl.PollFetches(context.Background())
			if fs.IsClientClosed() {
				return
			}
		}
	}()
	return m, nil
}

// franzMember is a Member over its own kgo group client.
type franzMember struct {
	parent    *franzClient
	cl        *kgo.Client
	done      chan struct{}
	closeOnce sync.Once
}

func (m *franzMember) Rebalance() { m.cl.ForceRebalance() }

func (m *franzMember) Close() {
	m.closeOnce.Do(func() {
		m.cl.Close()
		<-m.done
		m.parent.life.remove(m)
	})
}

// slotBalancer is the kgo.GroupBalancer of the cluster group: members
// advertise their address, the slots they need and the slots they own;
// the leader plans with planSlots and sends every member the whole map.
type slotBalancer struct {
	opts  MemberOptions
	state slotState
	seq   atomic.Int32
}

func (b *slotBalancer) ProtocolName() string { return ClusterProtocol }

func (b *slotBalancer) IsCooperative() bool { return false }

func (b *slotBalancer) JoinGroupMetadata([]string, map[string][]int32, int32) []byte {
	meta := memberMeta{Version: 1, Address: b.opts.Address, Slots: 1, Owned: b.state.get()}
	if b.opts.Slots != nil {
		meta.Slots = max(1, b.opts.Slots())
	}
	out, err := json.Marshal(meta)
	if err != nil {
		panic(fmt.Sprintf("kafka: encode cluster metadata: %v", err)) // strings and ints only
	}
	return out
}

func (b *slotBalancer) ParseSyncAssignment(assignment []byte) (map[string][]int32, error) {
	a, err := decodeAssignment(b.seq.Add(1), assignment)
	if err != nil {
		return nil, err
	}
	b.state.set(a)
	if b.opts.OnAssign != nil {
		b.opts.OnAssign(a)
	}
	return map[string][]int32{}, nil
}

func (b *slotBalancer) revoke() {
	if b.opts.OnRevoke != nil {
		b.opts.OnRevoke()
	}
}

func (b *slotBalancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	metas := make([]memberMeta, len(members))
	ids := make([]string, len(members))
	for i, m := range members {
		if err := json.Unmarshal(m.ProtocolMetadata, &metas[i]); err != nil {
			return nil, nil, fmt.Errorf("kafka: cluster member %s metadata: %w", m.MemberID, err)
		}
		ids[i] = m.MemberID
	}
	return slotPlan{ids: ids, metas: metas}, map[string]struct{}{b.opts.Topic: {}}, nil
}

// slotPlan is the leader's plan for one generation.
type slotPlan struct {
	ids   []string
	metas []memberMeta
}

func (p slotPlan) Balance(map[string]int32) kgo.IntoSyncAssignment { return p }

func (p slotPlan) IntoSyncAssignment() []kmsg.SyncGroupRequestGroupAssignment {
	enc := encodePlan(p.metas, planSlots(p.metas))
	out := make([]kmsg.SyncGroupRequestGroupAssignment, len(p.ids))
	for i, id := range p.ids {
		out[i] = kmsg.NewSyncGroupRequestGroupAssignment()
		out[i].MemberID = id
		out[i].MemberAssignment = enc[i]
	}
	return out
}

var (
	_ Membership = (*franzClient)(nil)
	_ Member     = (*franzMember)(nil)
)
