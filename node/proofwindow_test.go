package node

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
)

// A miner holds a committed round's tile chaining values until its
// validator's verdict, not for the whole proof window: with a window of an
// hour, four verified rounds leave at most the rounds still in play held
// (one playing and one queued per validator), not all four.
func TestMinerForgetsRoundAtVerdict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Miner.ProofWindow = config.Duration{Duration: time.Hour}
		v := tn.start(RoleValidator, cfg, nil)
		m := tn.start(RoleMiner, cfg, cpu.Backend{})
		tn.connect(m, v)
		tn.waitVerified([]*Node{v}, []*Node{m}, 4, 90*time.Second)
		if held := m.HeldRounds(); held > 2 {
			t.Fatalf("the miner holds %d rounds after 4 verified ones", held)
		}
	})
}
