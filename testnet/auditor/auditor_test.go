package auditor

import (
	"errors"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/audit"
)

// TestChecks: an honest validator with a clean, recomputed audit passes;
// one whose audit failed fails the check; the dishonest validator's bad
// records are named, and only its own.
func TestChecks(t *testing.T) {
	bad := peer.ID("dishonest")
	clean := &audit.PeerAuditReport{Report: &audit.Report{EpochRecords: 3, Recomputed: 3}, Audited: []string{"v1"}}
	found := &audit.PeerAuditReport{Report: &audit.Report{EpochRecords: 3, Recomputed: 3,
		Problems: []string{"epoch 2: epoch record of " + bad.String() + " contradicts its evidence", "epoch 2: epoch record of someone else"}},
		Audited: []string{"v1"}}
	vs := []Validator{{Name: "v1", ID: "v1"}, {Name: "v2", ID: "v2"}, {Name: "bad", ID: bad, Adversary: "dishonest-validator"}}

	checks := Checks(vs, map[string]Result{"v1": {Report: clean}, "v2": {Report: clean}, "bad": {Report: found}})
	if len(checks) != 2 || !checks[0].OK || !checks[1].OK {
		t.Fatalf("all clean, dishonest found: %+v", checks)
	}
	if !strings.HasPrefix(checks[1].Detail, "1 bad records named") {
		t.Errorf("only the dishonest validator's record is its own: %s", checks[1].Detail)
	}

	checks = Checks(vs, map[string]Result{"v1": {Report: clean}, "v2": {Err: errors.New("unreachable")}, "bad": {Report: clean}})
	if checks[0].OK || !strings.Contains(checks[0].Detail, "v2: unreachable") || checks[1].OK {
		t.Errorf("v2 unreachable, dishonest unnamed: %+v", checks)
	}

	checks = Checks(vs, map[string]Result{"v1": {Report: clean}})
	if checks[0].OK || !strings.Contains(checks[0].Detail, "v2: not audited") || checks[1].OK || checks[1].Detail != "not audited" {
		t.Errorf("validators with no audit result fail, without a panic: %+v", checks)
	}

	vs[1].Down = true // a fault stopped it: not judged
	if checks = Checks(vs, map[string]Result{"v1": {Report: clean}, "v2": {Err: errors.New("unreachable")}, "bad": {Report: found}}); !checks[0].OK {
		t.Errorf("a validator down by a fault is not judged: %+v", checks[0])
	}
}

// TestSquatterCheck: the squatted miner's audit passes only if it names
// the squatter, unstaked, with challenges.
func TestSquatterCheck(t *testing.T) {
	sq := peer.ID("squatter")
	with := func(signers ...audit.OffScheduleSigner) Result {
		return Result{Report: &audit.PeerAuditReport{Report: &audit.Report{}, OffScheduleEpochs: 2, OffScheduleOthers: signers}}
	}
	for _, c := range []struct {
		name string
		a    Result
		ok   bool
	}{
		{"named unstaked", with(audit.OffScheduleSigner{Signer: sq.String(), Challenges: 4, Epochs: 2, Unstaked: true}), true},
		{"named among others", with(audit.OffScheduleSigner{Signer: "v1", Challenges: 1}, audit.OffScheduleSigner{Signer: sq.String(), Challenges: 1, Unstaked: true}), true},
		{"named but staked", with(audit.OffScheduleSigner{Signer: sq.String(), Challenges: 4, Unstaked: false}), false},
		{"another signer", with(audit.OffScheduleSigner{Signer: "v1", Challenges: 4, Unstaked: true}), false},
		{"none kept", with(), false},
		{"unreachable", Result{Err: errors.New("unreachable")}, false},
		{"not audited", Result{}, false},
	} {
		if got := SquatterCheck(sq, c.a); got.OK != c.ok {
			t.Errorf("%s: ok %v, want %v (%s)", c.name, got.OK, c.ok, got.Detail)
		}
	}
}
