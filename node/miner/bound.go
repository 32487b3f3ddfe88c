package miner

import (
	"fmt"

	"github.com/pog-network/pog/node/plan"
	"github.com/pog-network/pog/protocol/pb"
)

// fits says whether this miner takes challenge c on: each sub-challenge's
// output within its capacity, and the round no larger, no longer and due
// no later than a plan could give it (plan.Admissible, SPEC.md §16). A
// round's work then ends by its deadline (mdriver.run), so an owner holds
// the device no longer than its own honest plan could.
func (m *Miner) fits(c *Challenge) error {
	for i, p := range c.Params {
		if p.OutputBytes() > m.Config.MaxOutputBytes {
			return fmt.Errorf("sub-challenge %d needs %d output bytes, capacity %d", i, p.OutputBytes(), m.Config.MaxOutputBytes)
		}
	}
	ann := m.announced.Load()
	if ann == nil {
		ann = &pb.MinerAnnounce{Gpus: m.GPUs} // none published yet
	}
	if err := plan.Admissible(m.Config.Plan, ann, c.Msg, c.Params); err != nil {
		return fmt.Errorf("beyond what a plan gives this miner: %w", err)
	}
	return nil
}
