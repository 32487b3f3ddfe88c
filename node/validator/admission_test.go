package validator

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
)

// TestAdmitKeepsHonestAboveSwarm admits 100 of 5,000 identities that
// announce and never compute beside honest miners: every weighed,
// verified or connected miner is admitted whatever the input order, the
// rest of the room goes to the swarm by seeded hash, identities first
// seen this epoch last.
func TestAdmitKeepsHonestAboveSwarm(t *testing.T) {
	var seed [32]byte
	seed[0] = 7
	var cands []Candidate
	honest := map[peer.ID]bool{}
	add := func(name string, c Candidate) {
		c.ID = peer.ID(name)
		c.Rank = AdmissionRank(seed, c.ID)
		cands = append(cands, c)
	}
	for i := range 10 {
		add(fmt.Sprint("weighed-", i), Candidate{Weight: float64(i+1) / 100})
		honest[peer.ID(fmt.Sprint("weighed-", i))] = true
	}
	for i := range 5 {
		add(fmt.Sprint("verified-", i), Candidate{Verified: true, Fresh: true})
		add(fmt.Sprint("connected-", i), Candidate{Connected: true, Fresh: true})
		honest[peer.ID(fmt.Sprint("verified-", i))], honest[peer.ID(fmt.Sprint("connected-", i))] = true, true
	}
	for i := range 5000 {
		add(fmt.Sprint("sybil-", i), Candidate{Fresh: i%2 == 0})
	}
	const limit = 100
	var first map[peer.ID]bool
	for try := range 3 {
		rand.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
		got := Admit(limit, append([]Candidate(nil), cands...))
		if len(got) != limit {
			t.Fatalf("admitted %d, want %d", len(got), limit)
		}
		for p := range honest {
			if !got[p] {
				t.Fatalf("honest %s not admitted", p)
			}
		}
		for p := range got {
			var n int
			if _, err := fmt.Sscanf(string(p), "sybil-%d", &n); err == nil && n%2 == 0 {
				t.Fatalf("fresh %s admitted before identities seen earlier", p)
			}
		}
		if try == 0 {
			first = got
			continue
		}
		for p := range got {
			if !first[p] {
				t.Fatalf("admission depends on input order: %s", p)
			}
		}
	}
	if got := Admit(limit, cands[:limit]); len(got) != limit {
		t.Fatalf("%d candidates that fit: admitted %d", limit, len(got))
	}
}

// TestAdmissionRankFollowsSeed checks that the hash order changes with
// the seed, so an identity's place is not known before the record that
// seeds it.
func TestAdmissionRankFollowsSeed(t *testing.T) {
	var a, b [32]byte
	b[0] = 1
	if AdmissionRank(a, "m") == AdmissionRank(b, "m") || AdmissionRank(a, "m") == AdmissionRank(a, "n") {
		t.Fatal("admission rank ignores its seed or its miner")
	}
}
