package testnet

import (
	"fmt"
	"slices"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/store"
	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/machine"
	"github.com/pog-network/pog/testnet/report"
)

// ramRebuildSpecs are the ram-rebuild adversary's identities: one host of
// profile first, its GPU shared and its cores and storage split as
// timeshare's, each identity holding the host's whole RAM dataset in turn
// (adversary.RAMHost, keyed by name).
func (r *run) ramRebuildSpecs(first machine.Profile) []minerSpec {
	if !r.cfg.Sim {
		return nil // the rebuild is modelled in virtual time only
	}
	const k = adversary.RAMRebuildIdentities
	dev := adversary.NewSharedDevice(first.FP16TFLOPS * r.cfg.Scale).InVirtualTime(true)
	var names []string
	for i := 1; i <= k; i++ {
		names = append(names, fmt.Sprintf("ram-rebuild-%d", i))
	}
	ram := adversary.NewRAMHost(r.cfg.EpochLength, names)
	var out []minerSpec
	for _, n := range names {
		out = append(out, minerSpec{name: n, profile: first.Name, adversary: "ram-rebuild", device: dev, hostShare: k, ram: ram})
	}
	return out
}

// hostParts fills ep.HostCPU and ep.HostRAM from each validator's host
// records of the epoch (the mean each validator credits, averaged over
// validators), in runs with the cpu-outsource or ram-rebuild adversary.
func (es *epochSummary) hostParts(ep *report.Epoch) error {
	advs := es.r.cfg.Adversaries
	if !slices.Contains(advs, "cpu-outsource") && !slices.Contains(advs, "ram-rebuild") {
		return nil
	}
	ep.HostCPU, ep.HostRAM = map[string]float64{}, map[string]float64{}
	for _, v := range es.validators {
		by := map[peer.ID][]*store.HostRecord{}
		for rec, err := range v.store.HostRounds(ep.Epoch, ep.Epoch) {
			if err != nil {
				return err
			}
			if peer.ID(rec.Validator) == v.id {
				by[peer.ID(rec.Miner)] = append(by[peer.ID(rec.Miner)], rec)
			}
		}
		for p, recs := range by {
			h := epoch.ProvenHost(recs)
			name, n := es.r.nameOf(p.String()), float64(len(es.validators))
			ep.HostCPU[name] += float64(h.CPUCores) * h.CPUGHz / n
			ep.HostRAM[name] += float64(h.RAMBytes) / n
		}
	}
	return nil
}
