package testnet

import (
	"fmt"

	"github.com/pog-network/pog/testnet/adversary"
	"github.com/pog-network/pog/testnet/machine"
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
