package validator

import (
	"testing"
	"time"

	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/node/plan"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/protocol/pb"
)

// Two validators of one set take disjoint, aligned slots of a miner, each
// its stake share; a validator outside the set owns no slot, and a set
// without stake is no schedule.
func TestSlotScheduleDisjoint(t *testing.T) {
	a, b, out := nodetest.Peer(t), nodetest.Peer(t), nodetest.Peer(t)
	stakes := map[string]float64{a.String(): 1, b.String(): 3}
	sa, sb := NewSlotSchedule(a, stakes, nil, 0.9), NewSlotSchedule(b, stakes, nil, 0.9)
	if sa == nil || sb == nil {
		t.Fatal("validators of the set got no schedule")
	}
	if NewSlotSchedule(a, map[string]float64{a.String(): 0}, nil, 1) != nil {
		t.Fatal("a set without stake gave a schedule")
	}
	so := NewSlotSchedule(out, stakes, nil, 0.9)
	if so == nil || so.self != -1 {
		t.Fatal("a validator outside the set should have the set's schedule and no place in it")
	}
	if s := NewSlotSchedule(a, nil, []string{a.String(), b.String()}, 1); s == nil || len(s.Stakes) != 2 || s.Stakes[0] != 1 {
		t.Fatal("network.validators should give every listed validator stake 1")
	}
	cfg := config.DefaultConfig().Validator
	ann := &pb.MinerAnnounce{Gpus: []*pb.GPU{{}}}
	slot := sa.ForMiner(plan.RoundTarget(cfg, ann)).Slot
	miner := nodetest.Peer(t)
	taken := map[time.Time]peer.ID{}
	count := map[peer.ID]int{}
	start := time.Unix(1_800_000_000, 0)
	for _, s := range []struct {
		id peer.ID
		s  *SlotSchedule
	}{{a, sa}, {b, sb}} {
		for at := start; at.Before(start.Add(2000 * slot)); {
			next := s.s.nextSlot(miner, ann, cfg, at)
			if next.UnixNano()%int64(slot) != 0 || next.Before(at.Add(-slot/8)) {
				t.Fatalf("slot at %v for %v: not an aligned, startable slot", next, at)
			}
			if other, ok := taken[next]; ok && other != s.id {
				t.Fatalf("slot %v given to both validators", next)
			}
			taken[next] = s.id
			count[s.id]++
			at = next.Add(slot)
		}
	}
	if at := start.Add(slot); so.nextSlot(miner, ann, cfg, at).Before(at.Add(scheduleHorizon * slot)) {
		t.Error("a validator outside the set was given a slot")
	}
	share := float64(count[b]) / float64(count[a]+count[b])
	if used := float64(count[a]+count[b]) / 2000; used < 0.85 || used > 0.95 || share < 0.7 || share > 0.8 {
		t.Errorf("owned %.2f of the slots (want 0.9), b's share %.2f (want 0.75)", used, share)
	}
}
