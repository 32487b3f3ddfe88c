package adversary

import (
	"slices"
	"time"

	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol/pb"
)

// The memory-inflate adversary computes at its real speed and tries to be
// credited more memory than it holds: its pongs come inflatePongDelay late
// (a longer round trip, longer steps), it announces the largest capacity
// the protocol allows, and after the first 1/inflateEarly of each epoch
// (past the epoch's first announce, which scoring reads) it announces
// inflateGPUs GPUs where it has one.
const (
	inflatePongDelay = 400 * time.Millisecond
	inflateEarly     = 4
	inflateGPUs      = 8
)

// overannounceGPUs is how many GPUs the gpu-overannounce adversary, one
// device bursting its roots, announces: more sub-challenges per round once
// shortened its chain (SPEC.md §16).
const overannounceGPUs = 16

// Announce sets up the memory-inflate and gpu-overannounce
// adversaries' options by name, so --procs children get them too.
func Announce(o *node.Options, adversary string, epoch time.Duration) {
	switch adversary {
	case "memory-inflate":
		o.Adversary.PongDelay = inflatePongDelay
		o.Config.Miner.MaxOutputBytes = proof.MaxOutputBytes
		own, late := o.GPUs, repeatGPUs(o.GPUs, inflateGPUs)
		o.Adversary.AlterAnnounce = func(a *pb.MinerAnnounce) {
			a.Gpus = own
			if time.Now().Sub(time.Unix(0, 0))%epoch >= epoch/inflateEarly {
				a.Gpus = late
			}
		}
	case "gpu-overannounce":
		o.GPUs = repeatGPUs(o.GPUs, overannounceGPUs)
	}
}

// repeatGPUs is n GPUs like gs's first.
func repeatGPUs(gs []*pb.GPU, n int) []*pb.GPU {
	if len(gs) == 0 {
		return nil
	}
	return slices.Repeat(gs[:1], n)
}
