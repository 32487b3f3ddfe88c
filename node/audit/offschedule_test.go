package audit

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/store"
)

// windowRule is a SlotRule of fixed answers: staked validators, and the
// kinds of miner each validator's window is open for (at any time).
type windowRule struct {
	staked   map[peer.ID]bool
	gpu, cpu map[peer.ID]bool
}

func (r windowRule) Staked(v peer.ID) bool { return r.staked[v] }
func (r windowRule) Opens(_, v peer.ID, gpu bool, _ time.Time) bool {
	return gpu && r.gpu[v] || !gpu && r.cpu[v]
}

// A kept challenge names its signer when the schedule puts it outside its
// window for either kind of miner (proven outright if it owns no slot);
// inside for one kind only it names no one; inside for both it is the
// peer's fault. Only the audited validators are findings.
func TestOffScheduleTally(t *testing.T) {
	const p, unstaked, late, either, gpuOnly, owner = peer.ID("miner"), peer.ID("u"), peer.ID("late"), peer.ID("either"), peer.ID("g"), peer.ID("owner")
	rule := windowRule{
		staked: map[peer.ID]bool{late: true, gpuOnly: true, owner: true},
		gpu:    map[peer.ID]bool{gpuOnly: true, owner: true, unstaked: true},
		cpu:    map[peer.ID]bool{owner: true},
	}
	tally := &offScheduleTally{p: p, rule: rule, signers: map[peer.ID]*OffScheduleSigner{}}
	for _, c := range []struct {
		e uint64
		v peer.ID
	}{{3, unstaked}, {3, unstaked}, {5, unstaked}, {4, late}, {4, gpuOnly}, {4, owner}, {6, owner}, {6, either}} {
		if err := tally.add(c.e, store.OffSchedule{Signer: []byte(c.v), At: 1}); err != nil {
			t.Fatal(err)
		}
	}
	rep, findings := &PeerAuditReport{}, []string{}
	tally.report(rep, []peer.ID{unstaked}, &findings)
	u := OffScheduleSigner{Signer: unstaked.String(), Challenges: 3, Epochs: 2, FirstEpoch: 3, LastEpoch: 5, Unstaked: true}
	if len(rep.OffSchedule) != 1 || rep.OffSchedule[0] != u {
		t.Errorf("audited signers %+v, want %+v", rep.OffSchedule, u)
	}
	// "either" is listed nowhere and staked nowhere: it owns no slot.
	want := []OffScheduleSigner{
		{Signer: either.String(), Challenges: 1, Epochs: 1, FirstEpoch: 6, LastEpoch: 6, Unstaked: true},
		{Signer: late.String(), Challenges: 1, Epochs: 1, FirstEpoch: 4, LastEpoch: 4},
	}
	if len(rep.OffScheduleOthers) != 2 || rep.OffScheduleOthers[0] != want[0] || rep.OffScheduleOthers[1] != want[1] {
		t.Errorf("other signers %+v, want %+v", rep.OffScheduleOthers, want)
	}
	if rep.OffScheduleAmbiguous != 1 {
		t.Errorf("%d ambiguous, want 1 (%s's)", rep.OffScheduleAmbiguous, gpuOnly)
	}
	if len(findings) != 2 || !strings.Contains(findings[0], "peer "+p.String()+" kept challenges that were inside their signer's opening window as off schedule (2; the first "+owner.String()+"'s") ||
		!strings.Contains(findings[1], "validator "+unstaked.String()+" challenged "+p.String()+" off schedule: 3 challenges in 2 epochs, 3 to 5; it owns no slot") {
		t.Errorf("findings %q", findings)
	}
	// A node keeps only listed validators' challenges: past a bound of
	// signers, the peer is at fault and the tally ends.
	tally = &offScheduleTally{p: p, rule: rule, signers: map[peer.ID]*OffScheduleSigner{}}
	for i := range maxOffScheduleSigners + 1 {
		err := tally.add(1, store.OffSchedule{Signer: []byte(fmt.Sprint(i)), At: 1})
		if (err != nil) != (i == maxOffScheduleSigners) {
			t.Fatalf("signer %d: %v", i, err)
		}
	}
}
