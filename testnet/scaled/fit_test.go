package scaled

import (
	"bytes"
	"testing"
	"time"

	"github.com/pog-network/pog/node/plan"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/round"
	"github.com/pog-network/pog/testnet/machine"
)

// TestEveryProfilesRoundFitsItsSlot: a round sized for each simulated
// profile at its scaled speed ends within the miner's slot, so that honest
// validators' rounds do not overlap at a miner and fill its queue (a 1 s
// CPU round target gave the CPU profile 1.6 s rounds in 1.25 s slots).
func TestEveryProfilesRoundFitsItsSlot(t *testing.T) {
	p := Params{EpochLength: 40 * time.Second, Epochs: 3, SlotSchedule: true, Scale: 4.6e-7}
	cfg := p.Node()
	for _, prof := range machine.Profiles {
		ann := &pb.MinerAnnounce{Hardware: prof.Host, Gpus: machine.AnnouncedGPUs(prof.GPU, prof.MemoryMB),
			MaxOutputBytes: cfg.Miner.MaxOutputBytes}
		tflops := prof.FP16TFLOPS * p.Scale
		pl, err := plan.Challenge(cfg.Validator, "miner", ann, 0, proof.FP16, tflops, tflops/2, time.Millisecond, bytes.NewReader(make([]byte, 1<<16)))
		if err != nil {
			t.Fatalf("%s: %v", prof.Name, err)
		}
		length := time.Duration(pl.Steps) * pl.StepTime
		if slot := round.SlotFor(plan.NominalRound(cfg.Validator, ann, time.Millisecond)); length > slot {
			t.Errorf("%s: a sized round of %d steps of %v lasts %v, past its %v slot", prof.Name, pl.Steps, pl.StepTime, length, slot)
		}
	}
}
