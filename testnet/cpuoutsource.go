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

// cpuOutsourceSpecs are the cpu-outsource adversary's identities: one host
// of profile first, its GPU shared and its RAM and storage split as
// timeshare's, its CPU host rounds answered by one server of its cores.
func (r *run) cpuOutsourceSpecs(first machine.Profile) []minerSpec {
	if !r.cfg.Sim {
		return nil // the server is modelled in virtual time only
	}
	const k = adversary.CPUOutsourceIdentities
	dev := adversary.NewSharedDevice(first.FP16TFLOPS * r.cfg.Scale).InVirtualTime(true)
	cpu := adversary.NewCPUServer(first.Host)
	var out []minerSpec
	for i := 1; i <= k; i++ {
		out = append(out, minerSpec{name: fmt.Sprintf("cpu-outsource-%d", i), profile: first.Name, adversary: "cpu-outsource",
			device: dev, hostShare: k, cpu: cpu})
	}
	return out
}

// hostCPU fills ep.HostCPU from each validator's host records of the
// epoch, in runs with the cpu-outsource adversary.
func (es *epochSummary) hostCPU(ep *report.Epoch) error {
	if !slices.Contains(es.r.cfg.Adversaries, "cpu-outsource") {
		return nil
	}
	ep.HostCPU = map[string]float64{}
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
			ep.HostCPU[es.r.nameOf(p.String())] += float64(h.CPUCores) * h.CPUGHz / float64(len(es.validators))
		}
	}
	return nil
}
