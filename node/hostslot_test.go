package node

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/internal/nodetest"
	"github.com/pog-network/pog/node/validator"
	"github.com/pog-network/pog/protocol/hostround"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
	"github.com/pog-network/pog/store"
)

// TestHostSlots: under a validator set, host rounds run only in host
// slots (SPEC.md §16). While the miner is there, every host slot of the
// span ends in one host set from its owner, played at the slot's start,
// and the miner refuses no host round; once it is gone, every host slot
// its validators own ends in a host no-show from the owner.
func TestHostSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.EpochLength = config.Duration{Duration: time.Hour} // one epoch: the miner stays scheduled
		cfg.Network.TrustAnyValidator = false
		cfg.Validator.HostCPUWindow, cfg.Validator.HostSlotShare = config.Duration{Duration: 20 * time.Millisecond}, 0.25
		ak, aid := nodetest.SeededKey(t, 11)
		bk, bid := nodetest.SeededKey(t, 12)
		stakes := map[string]float64{aid.String(): 1, bid.String(): 1}
		type host struct {
			at  time.Time
			rec *store.HostRecord
		}
		var mu sync.Mutex
		var hosts []host
		onHost := func(r *store.HostRecord) {
			mu.Lock()
			defer mu.Unlock()
			hosts = append(hosts, host{time.Now(), r})
		}
		a, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) { o.Key, o.Stakes, o.OnHost = ak, stakes, onHost })
		b, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) { o.Key, o.Stakes, o.OnHost = bk, stakes, onHost })
		m, _ := tn.startWith(RoleMiner, cfg, cpu.Backend{}, func(o *Options) { o.Stakes, o.Hardware = stakes, &pb.Hardware{CpuCores: 2} })
		tn.connect(m, a)
		tn.connect(m, b)
		tn.waitVerified([]*Node{a, b}, []*Node{m}, 1, time.Minute)
		sch, _ := validator.ScheduleOf(stakes, nil, 1, cfg.Validator)
		owner := map[int]peer.ID{sch.Index([]byte(aid)): aid, sch.Index([]byte(bid)): bid}
		// slots are the host slots whose opening windows lie in [from, to),
		// by start, with their owners.
		slots := func(from, to time.Time) map[int64]peer.ID {
			out := map[int64]peer.ID{}
			for k := uint64(from.UnixNano()/int64(sch.HostSlot)) + 1; sch.HostStart(k + 1).Before(to); k++ {
				if o := sch.HostOwner(k); o >= 0 {
					out[sch.HostStart(k).UnixNano()] = owner[o]
				}
			}
			return out
		}
		// played are the host records stored in [from, to), by the host
		// slot they were stored in; each must be its owner's, and once.
		played := func(from, to time.Time, missed bool) map[int64]peer.ID {
			mu.Lock()
			defer mu.Unlock()
			out := map[int64]peer.ID{}
			for _, h := range hosts {
				if h.at.Before(from) || !h.at.Before(to) {
					continue
				}
				k := uint64(h.at.UnixNano() / int64(sch.HostSlot))
				noShow := strings.HasPrefix(h.rec.Reason, epoch.NoShowPrefix)
				switch who := peer.ID(h.rec.Validator); {
				case owner[sch.HostOwner(k)] != who:
					t.Errorf("a host record of %s stored at %v, in no host slot of its own", who, h.at)
				case out[sch.HostStart(k).UnixNano()] != "":
					t.Errorf("two host records in the host slot at %v", sch.HostStart(k))
				case missed != noShow || !missed && h.rec.Verdict != store.VerdictVerified:
					t.Errorf("host record in the host slot at %v: %v, %q", sch.HostStart(k), h.rec.Verdict, h.rec.Reason)
				}
				out[sch.HostStart(k).UnixNano()] = peer.ID(h.rec.Validator)
			}
			return out
		}
		compare := func(what string, want, got map[int64]peer.ID) {
			for s, who := range want {
				if got[s] != who {
					t.Errorf("%s: the host slot at %v of %s ended in no record of its owner", what, time.Unix(0, s), who)
				}
			}
			if len(want) < 10 {
				t.Errorf("%s: only %d host slots", what, len(want))
			}
		}
		from := time.Now()
		time.Sleep(40 * time.Second)
		synctest.Wait()
		compare("connected", slots(from, time.Now()), played(from, time.Now(), false))
		if n := len(m.OffSchedule()); n != 0 {
			t.Errorf("the miner refused %d validators' rounds off schedule", n)
		}
		tn.stop(m)
		tn.waitDisconnected(a, m.ID())
		tn.waitDisconnected(b, m.ID())
		from = time.Now().Add(round.OpeningSkew)
		time.Sleep(40 * time.Second)
		synctest.Wait()
		compare("gone", slots(from, time.Now().Add(-sch.HostSlot)), played(from, time.Now(), true))
	})
}

// TestRefusedHostSlotIsRecorded: a connected miner that stops serving
// host streams (it drops the protocol's handler) cannot leave a host slot
// unrecorded and so choose which slots its mean counts: every host slot
// ends in one missed record from its owner.
func TestRefusedHostSlotIsRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg, ak, stakes, sch := soleHostValidator(t)
		hosts := &hostsBySlot{t: t, sch: sch, by: map[int64]*store.HostRecord{}}
		a, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) { o.Key, o.Stakes, o.OnHost = ak, stakes, hosts.add })
		m, _ := tn.startWith(RoleMiner, cfg, cpu.Backend{}, func(o *Options) { o.Stakes, o.Hardware = stakes, &pb.Hardware{CpuCores: 2} })
		tn.connect(m, a)
		tn.waitVerified([]*Node{a}, []*Node{m}, 1, time.Minute)
		m.host.RemoveStreamHandler(hostround.Protocol)
		from := time.Now().Add(2 * time.Second) // identify has told the validator
		time.Sleep(40 * time.Second)
		synctest.Wait()
		hosts.mu.Lock()
		defer hosts.mu.Unlock()
		n := 0
		for k := uint64(from.UnixNano()/int64(sch.HostSlot)) + 1; sch.HostStart(k + 1).Before(time.Now()); k++ {
			if sch.HostOwner(k) < 0 {
				continue
			}
			n++
			switch r := hosts.by[sch.HostStart(k).UnixNano()]; {
			case r == nil:
				t.Errorf("the host slot at %v ended in no record", sch.HostStart(k))
			case r.Verdict != store.VerdictFailed || !r.Missed || !strings.HasPrefix(r.Reason, "not served: "):
				t.Errorf("the host slot at %v: %v, missed %v, %q; want missed, not served", sch.HostStart(k), r.Verdict, r.Missed, r.Reason)
			}
		}
		if n < 10 {
			t.Fatalf("only %d host slots", n)
		}
	})
}

// heldReason and stepsReason are a no-show's reason for an owned slot a
// miner's round or host set held past its allowance, and for a host slot
// its steps held.
const heldReason, stepsReason = "open past its allowance", "its round's steps still running"

// heldFor is how long TestHeldRoundSkipsNoSlot's miner holds what it holds.
const heldFor = 4 * time.Second

// TestHeldRoundSkipsNoSlot: a miner that holds its round open keeps the
// validator's GPU round running through the slots that follow, host slots
// among them, but picks no slot it skips:
//   - held after its last root (its commitment): the owner plays every
//     host slot beside the round, and the GPU slots past the commitment's
//     allowance end in no-shows;
//   - held before it (its last root, so its steps run past 9/8 of their
//     plan): every host slot its steps hold ends in a no-show, and GPU
//     slots past the allowance do;
//   - a host set held (its openings): the slots, GPU and host, whose
//     window ends past the opening's allowance end in no-shows.
//
// Only GPU slots within the plan's allowance go unrecorded.
func TestHeldRoundSkipsNoSlot(t *testing.T) {
	for _, c := range []struct {
		name         string
		hold         func(*Options, time.Duration)
		allHostsPlay bool
		setLag       time.Duration // how long a host set lasts
	}{
		{"commitment", func(o *Options, d time.Duration) { o.Adversary.Miner.HoldCommitment = d }, true, 0},
		{"last root", func(o *Options, d time.Duration) { o.Adversary.Miner.HoldLastRoot = d }, false, 0},
		{"host opening", func(o *Options, d time.Duration) { o.Adversary.Miner.HoldHostOpening = d }, true, heldFor},
		{"pongs", func(o *Options, d time.Duration) { o.Adversary.PongDelay = d + 2*time.Second }, true, 5 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, hosts, heldHosts, heldGPU := heldRoundSlots(t, c.hold, c.setLag)
			t.Logf("%d host slots, %d host records (%d for a held round), %d GPU no-shows for a held round", n, hosts, heldHosts, heldGPU)
			if heldGPU == 0 {
				t.Errorf("no GPU slot ended in a no-show for a held round")
			}
			if hosts < n {
				t.Errorf("%d host slots ended in %d host records: want one each", n, hosts)
			}
			if c.allHostsPlay != (heldHosts == 0) {
				t.Errorf("%d host no-shows for a held round's steps, want them only when the steps are held", heldHosts)
			}
		})
	}
}

// heldRoundSlots runs a sole validator with a miner that hold makes hold
// each round heldFor, several slots, and counts over 40 s of virtual
// time, after 10 s and setLag for the first round (a probe, whose steps
// are excused, after pings excused up to pingTimeout), the host slots,
// their records, and the host and GPU no-shows for a held round.
func heldRoundSlots(t *testing.T, hold func(*Options, time.Duration), setLag time.Duration) (n, hosts, heldHosts, heldGPU int) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg, ak, stakes, sch := soleHostValidator(t)
		by := &hostsBySlot{t: t, sch: sch, lag: setLag, by: map[int64]*store.HostRecord{}}
		var mu sync.Mutex
		onRecord := func(r *store.RoundRecord) {
			mu.Lock()
			defer mu.Unlock()
			if strings.Contains(r.Reason, heldReason) {
				heldGPU++
			}
		}
		a, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) { o.Key, o.Stakes, o.OnHost, o.OnRecord = ak, stakes, by.add, onRecord })
		m, _ := tn.startWith(RoleMiner, cfg, cpu.Backend{}, func(o *Options) {
			o.Stakes, o.Hardware = stakes, &pb.Hardware{CpuCores: 2}
			hold(o, heldFor)
		})
		tn.connect(m, a)
		time.Sleep(10*time.Second + setLag) // the first round: its pings' excuse is pingTimeout
		from := time.Now()
		time.Sleep(40 * time.Second)
		synctest.Wait()
		until := time.Now().Add(-sch.HostSlot - setLag) // slots whose records are in
		n = hostSlotsSince(sch, from, until)
		mu.Lock()
		defer mu.Unlock()
		by.mu.Lock()
		defer by.mu.Unlock()
		first, end := from.UnixNano()/int64(sch.HostSlot)+1, until.UnixNano()
		for at, r := range by.by {
			if at < first*int64(sch.HostSlot) || at+int64(sch.HostSlot) >= end {
				continue // outside the slots counted
			}
			hosts++
			if strings.Contains(r.Reason, stepsReason) {
				heldHosts++
			}
		}
	})
	return n, hosts, heldHosts, heldGPU
}

// TestDistantHostSetAllKinds: a miner 275 ms away (a 550 ms round trip)
// takes every kind of its owner's host set. The validator measures the
// round trip once for the set: three pings before each kind held the
// miner 4ρ between kinds, past the round.OpeningLag in which it takes the
// next kind, and it refused RAM as off schedule. Its GPU rounds, grown to
// 20 round trips, span several slots; the validator starts none that
// could run into its own host slot (intoOwnHostSlot), so every host slot
// ends in a played set: before, those the rounds held were skipped
// unrecorded (about half), or with their steps held to no-shows.
func TestDistantHostSetAllKinds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNetAt(t, 275*time.Millisecond)
		cfg, ak, stakes, sch := soleHostValidator(t)
		cfg.Validator.HostRAMSteps, cfg.Miner.RAMBytes = 1<<10, 64*ramItems
		// Rounds grown to 20 round trips are real work here (seconds of
		// it under the race detector); what is tested is the set's pace.
		cfg.Validator.HostMaxRound = config.Duration{Duration: 20 * time.Millisecond}
		// A CPU window whose end leaves room for the round trip (SPEC
		// §23.2), of scaled steps: 2^14 real ones, not 2^24.
		cfg.Validator.HostCPUWindow, cfg.Validator.HostCPUScaleLog = config.Duration{Duration: time.Second}, 10
		// Host slots of 5 s, so that a set fits in one; the GPU rounds,
		// 20 round trips, span two.
		cfg.Validator.RoundTarget = config.Duration{Duration: 4 * time.Second}
		sch, _ = validator.ScheduleOf(stakes, nil, 1, cfg.Validator)
		var mu sync.Mutex
		verified, held, sets := map[byte]int{}, 0, 0
		onHost := func(r *store.HostRecord) {
			mu.Lock()
			defer mu.Unlock()
			if kind, _, ok := epoch.HostMeasurement(r); ok {
				verified[kind]++
			}
			if strings.Contains(r.Reason, stepsReason) {
				held++
			}
			if ch, err := hostround.DecodeChallenge(r.Challenge); err == nil && ch.Proof.Kind() == hostround.KindCPU {
				sets++
			}
		}
		a, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) { o.Key, o.Stakes, o.OnHost = ak, stakes, onHost })
		m, _ := tn.startWith(RoleMiner, cfg, cpu.Backend{}, func(o *Options) { o.Stakes, o.Hardware = stakes, &pb.Hardware{CpuCores: 2} })
		tn.connect(m, a)
		from := time.Now()
		time.Sleep(90 * time.Second)
		synctest.Wait()
		mu.Lock()
		if n := hostSlotsSince(sch, from, time.Now().Add(-sch.HostSlot)); sets < n {
			t.Errorf("%d host slots ended in %d host sets", n, sets)
		}
		mu.Unlock()
		_, hosts := m.miner.Played()
		refused := 0
		for _, h := range hosts {
			if strings.HasPrefix(h.Error, "refused") {
				refused++
				t.Logf("refused: %s", h.Error)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		t.Logf("verified host rounds: CPU %d, RAM %d; %d of %d refused; %d no-shows for its GPU round's steps", verified[hostround.KindCPU], verified[hostround.KindRAM], refused, len(hosts), held)
		if held > 0 {
			t.Errorf("%d host no-shows for the distant miner's GPU rounds, which the validator started into its own host slots", held)
		}
		if refused > 0 || verified[hostround.KindRAM] == 0 || verified[hostround.KindRAM] < verified[hostround.KindCPU]-1 {
			t.Errorf("verified host rounds: CPU %d, RAM %d; the miner refused %d", verified[hostround.KindCPU], verified[hostround.KindRAM], refused)
		}
	})
}

// hostSlotsSince counts the host slots that opened after from and ended
// a host slot before now.
func hostSlotsSince(sch round.Schedule, from, until time.Time) int {
	n := 0
	for k := uint64(from.UnixNano()/int64(sch.HostSlot)) + 1; sch.HostStart(k + 1).Before(until); k++ {
		if sch.HostOwner(k) >= 0 {
			n++
		}
	}
	return n
}

// soleHostValidator is testConfig with one hour-long epoch (the miner
// stays scheduled), CPU host rounds and one host slot in four, under one
// staked validator: its key, the stakes naming it and its schedule.
func soleHostValidator(t *testing.T) (config.Config, crypto.PrivKey, map[string]float64, round.Schedule) {
	cfg := testConfig()
	cfg.Network.EpochLength = config.Duration{Duration: time.Hour}
	cfg.Network.TrustAnyValidator = false
	cfg.Validator.HostCPUWindow, cfg.Validator.HostSlotShare = config.Duration{Duration: 20 * time.Millisecond}, 0.25
	k, id := nodetest.SeededKey(t, 11)
	stakes := map[string]float64{id.String(): 1}
	sch, _ := validator.ScheduleOf(stakes, nil, 1, cfg.Validator)
	return cfg, k, stakes, sch
}

// hostsBySlot keeps host records by the start of the host slot each is
// for, failing t on a second record in one slot: a no-show's is in its
// reason, a played set's is the slot it was stored in, lag (how long a
// set lasts) before.
type hostsBySlot struct {
	t   *testing.T
	sch round.Schedule
	lag time.Duration
	mu  sync.Mutex
	by  map[int64]*store.HostRecord
}

func (h *hostsBySlot) add(r *store.HostRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	at := time.Now().Add(-h.lag)
	if i := strings.LastIndex(r.Reason, " at "); strings.HasPrefix(r.Reason, epoch.NoShowPrefix) && i >= 0 {
		slot, err := time.Parse(time.RFC3339Nano, r.Reason[i+len(" at "):])
		if err != nil {
			h.t.Fatalf("no-show reason %q: %v", r.Reason, err)
		}
		at = slot
	}
	k := uint64(at.UnixNano() / int64(h.sch.HostSlot))
	if h.by[h.sch.HostStart(k).UnixNano()] != nil {
		h.t.Errorf("two host records in the host slot at %v", h.sch.HostStart(k))
	}
	h.by[h.sch.HostStart(k).UnixNano()] = r
}

// TestStalledPingsSkipNoSlot: a miner that answers each pinging's first
// ping at once and stalls the later ones 1 s (its round trip short, its
// pings past their allowance) leaves no more of its owned slots without a
// record than the same miner answering at once. Before, the validator
// judged the round after the stall: 4 of 15 rounds ran into its own host
// slot from there and were skipped unrecorded, and 2 more slots fell in
// the rounds' excuse, moved late by the stall.
func TestStalledPingsSkipNoSlot(t *testing.T) {
	owned, honest := unrecordedSlots(t, 0)
	_, stalled := unrecordedSlots(t, time.Second)
	t.Logf("%d owned slots; without a record: %d answering at once, %d stalling later pongs 1 s", owned, honest, stalled)
	if owned < 10 || stalled > honest {
		t.Errorf("of %d owned slots %d have no record for the stalling miner, %d for the same miner answering at once", owned, stalled, honest)
	}
}

// unrecordedSlots runs a sole validator with a CPU miner (seeded keys,
// rounds of 4 s in 5 s slots, one host slot in four) whose later pongs of
// each pinging wait stall, and counts over 120 s of virtual time, after
// 20 s, the slots the validator owns with it and those of them without a
// GPU record (verified, failed or a no-show) sent in the slot.
func unrecordedSlots(t *testing.T, stall time.Duration) (owned, unrecorded int) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg, ak, stakes, _ := soleHostValidator(t)
		cfg.Validator.RoundTarget = config.Duration{Duration: 4 * time.Second}
		cfg.Validator.RoundTargetCPU = cfg.Validator.RoundTarget
		sch, _ := validator.ScheduleOf(stakes, nil, 1, cfg.Validator)
		sch.Slot = round.SlotFor(cfg.Validator.RoundTarget.Duration)
		var mu sync.Mutex
		sent := map[uint64]bool{}
		a, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.Key, o.Stakes = ak, stakes
			o.OnRecord = func(r *store.RoundRecord) {
				mu.Lock()
				defer mu.Unlock()
				sent[sch.SlotAt(time.Unix(0, r.SentUnixNano))] = true
			}
		})
		mk, mid := nodetest.SeededKey(t, 21)
		m, _ := tn.startWith(RoleMiner, cfg, cpu.Backend{}, func(o *Options) {
			o.Key, o.Stakes, o.Hardware = mk, stakes, &pb.Hardware{CpuCores: 2}
			o.Adversary.Miner.HoldLaterPongs = stall
		})
		tn.connect(m, a)
		from := sch.SlotAt(time.Now().Add(20 * time.Second))
		time.Sleep(150 * time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		for j := from; j < from+120*uint64(time.Second)/uint64(sch.Slot); j++ {
			if sch.Owner([]byte(mid), j) == sch.Index([]byte(a.ID())) {
				owned++
				if !sent[j] {
					unrecorded++
				}
			}
		}
	})
	return owned, unrecorded
}
