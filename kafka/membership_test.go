package kafka

import (
	"slices"
	"testing"
)

func TestPlanSlotsBalance(t *testing.T) {
	for _, tc := range []struct {
		members, slots int
	}{{1, 1}, {1, 4}, {2, 4}, {3, 4}, {2, 5}, {4, 3}, {3, 12}} {
		ms := make([]memberMeta, tc.members)
		for i := range ms {
			ms[i] = memberMeta{Address: string(rune('a' + i)), Slots: int32(tc.slots)}
		}
		owner := planSlots(ms)
		if len(owner) != tc.slots {
			t.Fatalf("%d members, %d slots: plan has %d slots", tc.members, tc.slots, len(owner))
		}
		count := make([]int, tc.members)
		for s, i := range owner {
			if i < 0 || i >= tc.members {
				t.Fatalf("%d members, %d slots: slot %d has owner %d", tc.members, tc.slots, s, i)
			}
			count[i]++
		}
		if slices.Max(count)-slices.Min(count) > 1 {
			t.Errorf("%d members, %d slots: unbalanced counts %v", tc.members, tc.slots, count)
		}
	}
}

func TestPlanSlotsSlotCountIsTheLargestAsked(t *testing.T) {
	owner := planSlots([]memberMeta{{Slots: 2}, {Slots: 6}, {Slots: 0}})
	if len(owner) != 6 {
		t.Fatalf("got %d slots, want 6", len(owner))
	}
	if got := planSlots(nil); len(got) != 1 || got[0] != -1 {
		t.Fatalf("no members: got %v", got)
	}
}

func TestPlanSlotsSticky(t *testing.T) {
	// b and a swapped places in the member order: they keep their slots.
	ms := []memberMeta{
		{Address: "b", Slots: 4, Owned: []int32{1, 3}},
		{Address: "a", Slots: 4, Owned: []int32{0, 2}},
	}
	if got, want := planSlots(ms), []int{1, 0, 1, 0}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// A third member joins: each keeps what fits its share, the newcomer
	// takes the rest, and only that moves.
	ms = append(ms, memberMeta{Address: "c", Slots: 6})
	ms[0].Owned, ms[1].Owned = []int32{1, 3, 5}, []int32{0, 2, 4}
	got := planSlots(ms)
	moved := 0
	for s, i := range got {
		if i != []int{1, 0, 1, 0, 1, 0}[s] {
			moved++
			if i != 2 {
				t.Fatalf("slot %d moved to %d, not to the newcomer: %v", s, i, got)
			}
		}
	}
	if moved != 2 {
		t.Fatalf("%d slots moved, want 2: %v", moved, got)
	}
}

func TestPlanSlotsFailover(t *testing.T) {
	// b died: the survivor keeps its slots and takes b's.
	ms := []memberMeta{{Address: "a", Slots: 4, Owned: []int32{0, 2}}}
	if got, want := planSlots(ms), []int{0, 0, 0, 0}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// A stale claim (two members claim slot 1) goes to the first; the
	// plan stays balanced.
	ms = []memberMeta{
		{Address: "a", Slots: 4, Owned: []int32{0, 1}},
		{Address: "b", Slots: 4, Owned: []int32{1, 2, 3}},
	}
	got := planSlots(ms)
	if got[0] != 0 || got[1] != 0 || got[2] != 1 || got[3] != 1 {
		t.Fatalf("got %v, want [0 0 1 1]", got)
	}
}

func TestAssignmentRoundTrip(t *testing.T) {
	ms := []memberMeta{{Address: "h1:1", Slots: 3}, {Address: "h2:2", Slots: 3}}
	owner := planSlots(ms)
	enc := encodePlan(ms, owner)
	seen := map[int32]bool{}
	for i, b := range enc {
		a, err := decodeAssignment(1, b)
		if err != nil {
			t.Fatal(err)
		}
		for p := int32(0); p < 7; p++ {
			owns := a.Owns(p)
			if owns != (owner[p%3] == i) {
				t.Fatalf("member %d: Owns(%d) = %v with plan %v", i, p, owns, owner)
			}
			if a.Owner(p) != ms[owner[p%3]].Address {
				t.Fatalf("member %d: Owner(%d) = %q", i, p, a.Owner(p))
			}
			if owns && p < 3 {
				seen[p] = true
			}
		}
	}
	if len(seen) != 3 {
		t.Fatalf("slots owned by someone: %v", seen)
	}
	var none Assignment
	if none.Owns(0) || none.Owner(0) != "" {
		t.Fatal("an empty assignment owns something")
	}
}
