package testnet

import (
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/node/validator"
	"github.com/pog-network/pog/store"
	"github.com/pog-network/pog/testnet/report"
)

// loadedCPU fills ep.Loaded: per validator, the loaded miner's proven CPU
// against its twin's, and the share of its host CPU proofs in that
// validator's host slots that ran clear of the job. Only simulated runs
// under the slot schedule model the job and place host slots.
func (es *epochSummary) loadedCPU(ep *report.Epoch) error {
	r := es.r
	l, twin := r.memberNamed("loaded"), r.memberNamed("miner-1")
	if l == nil || twin == nil || l.spec.load == nil || !r.cfg.SlotSchedule || !r.cfg.Sim {
		return nil
	}
	sched, ok := validator.ScheduleOf(r.stakes(), r.validatorIDs, 1, l.cfg.Validator)
	if !ok || sched.HostShare == 0 {
		return nil
	}
	ep.Loaded = map[string]report.LoadedCPU{}
	length := int64(r.cfg.EpochLength)
	for _, v := range es.validators {
		i := sched.Index([]byte(v.id))
		if i < 0 {
			continue // owns no host slot
		}
		recs := map[peer.ID][]*store.HostRecord{}
		for rec, err := range v.store.HostRounds(ep.Epoch, ep.Epoch) {
			if err != nil {
				return err
			}
			if peer.ID(rec.Validator) == v.id {
				recs[peer.ID(rec.Miner)] = append(recs[peer.ID(rec.Miner)], rec)
			}
		}
		clean, n := l.spec.load.CleanShare(func(t time.Time) bool {
			return uint64(t.UnixNano()/length) == ep.Epoch && sched.HostOwner(uint64(t.UnixNano()/int64(sched.HostSlot))) == i
		})
		lo, tw := coreGHz(recs[l.id]), coreGHz(recs[twin.id])
		if n > 0 || lo > 0 || tw > 0 { // else it owned no host slot in the epoch
			ep.Loaded[v.info.Name] = report.LoadedCPU{Loaded: lo, Twin: tw, Clean: clean, Proofs: n}
		}
	}
	return nil
}

// coreGHz is the CPU core·GHz one validator's host records prove.
func coreGHz(recs []*store.HostRecord) float64 {
	h := epoch.ProvenHost(recs)
	return float64(h.CPUCores) * h.CPUGHz
}
