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
	cfg := config.DefaultConfig().Validator
	full := cfg
	cfg.DutyCycle, full.DutyCycle = 0.9, 1
	sa, sb := NewSlotSchedule(a, stakes, nil, cfg), NewSlotSchedule(b, stakes, nil, cfg)
	if sa == nil || sb == nil {
		t.Fatal("validators of the set got no schedule")
	}
	if NewSlotSchedule(a, map[string]float64{a.String(): 0}, nil, full) != nil {
		t.Fatal("a set without stake gave a schedule")
	}
	so := NewSlotSchedule(out, stakes, nil, cfg)
	if so == nil || so.self != -1 {
		t.Fatal("a validator outside the set should have the set's schedule and no place in it")
	}
	if s := NewSlotSchedule(a, nil, []string{a.String(), b.String()}, full); s == nil || len(s.Stakes) != 2 || s.Stakes[0] != 1 {
		t.Fatal("network.validators should give every listed validator stake 1")
	}
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
	want := cfg.DutyCycle * (1 - cfg.HostSlotShare) // host slots start no round
	if used := float64(count[a]+count[b]) / 2000; used < want-0.05 || used > want+0.05 || share < 0.7 || share > 0.8 {
		t.Errorf("owned %.2f of the slots (want %.2f), b's share %.2f (want 0.75)", used, want, share)
	}
}

// Host slots are the same for every miner: two validators own disjoint
// ones, each its stake share of host_slot_share of the GPU slots, and no
// round slot of any miner lies in one.
func TestHostSlotsDisjoint(t *testing.T) {
	a, b := nodetest.Peer(t), nodetest.Peer(t)
	stakes := map[string]float64{a.String(): 1, b.String(): 3}
	cfg := config.DefaultConfig().Validator
	sa, sb := NewSlotSchedule(a, stakes, nil, cfg), NewSlotSchedule(b, stakes, nil, cfg)
	slot := sa.HostSlot
	start := time.Unix(1_800_000_000, 0)
	owner := map[time.Time]*SlotSchedule{}
	for _, s := range []*SlotSchedule{sa, sb} {
		for at := start; at.Before(start.Add(4000 * slot)); {
			next := s.nextHost(at)
			if next.IsZero() || next.Before(at) || next.UnixNano()%int64(slot) != 0 {
				t.Fatalf("host slot at %v for %v: not an aligned slot at or after it", next, at)
			}
			if owner[next] != nil {
				t.Fatalf("host slot %v given to both validators", next)
			}
			owner[next] = s
			at = next.Add(1)
		}
	}
	var nb int
	for at, s := range owner {
		if s == sb {
			nb++
		}
		for _, m := range []peer.ID{nodetest.Peer(t), nodetest.Peer(t)} {
			for _, target := range []time.Duration{cfg.RoundTarget.Duration, cfg.RoundTargetCPU.Duration} {
				r := sa.ForMiner(target)
				for j := r.SlotAt(at); r.Start(j).Before(at.Add(slot)); j++ {
					if r.Owner([]byte(m), j) >= 0 {
						t.Fatalf("miner slot %d (of %v) in the host slot at %v has an owner", j, r.Slot, at)
					}
				}
			}
		}
	}
	if used, share := float64(len(owner))/4000, float64(nb)/float64(len(owner)); used < cfg.HostSlotShare-0.02 || used > cfg.HostSlotShare+0.02 || share < 0.7 || share > 0.8 {
		t.Errorf("host slots %.3f of the slots (want %.3f), b's share %.2f (want 0.75)", used, cfg.HostSlotShare, share)
	}
}
