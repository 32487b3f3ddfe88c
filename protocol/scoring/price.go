package scoring

import "math"

// Demand is the demand factor for a network utilisation (the fraction of
// offered GPU-hours rented, 0..1): utilisation ÷ DemandTarget, clamped to
// [DemandMin, DemandMax]. At the target prices sit at the base rate; a busier
// network raises them (up to DemandMax×) to draw in supply, an idle one
// lowers them (down to DemandMin×) to draw in renters. With the defaults,
// 75 % utilisation → 1.0, 90 % → 1.2, 30 % → 0.5 (clamped from 0.4).
func Demand(c Config, utilisation float64) float64 {
	if !(c.DemandTarget > 0) {
		return clamp(0, c.DemandMin, c.DemandMax)
	}
	return clamp(utilisation/c.DemandTarget, c.DemandMin, c.DemandMax)
}

// Price is the rental price of one of the miner's GPUs for one hour, in USD:
//
//	BaseRateUSD × (FP16Sustained ÷ gpus) ÷ Reference.GPUFP16TFLOPS × demand
//
// A GPU is priced by the validator's measurement, not by its model name: a
// GPU sustaining the reference GPU's fp16 throughput (610 TFLOPS, an H200)
// rents at the base rate (3.50 USD) times demand, a slower or faster one in
// proportion. fp16 is used because rental work is mostly half-precision AI
// work. Unlike scores the ratio is not capped: a renter pays for speed.
// demand is clamped to [DemandMin, DemandMax] (use Demand to derive it); gpus
// is the number of GPUs the measurement covers (the announced count). A miner
// without fp16 rounds, or gpus < 1, prices at 0. Whether a penalised or
// failed miner is offered at all is the caller's policy.
func Price(c Config, s Score, gpus int, demand float64) float64 {
	if gpus < 1 || !(c.Reference.GPUFP16TFLOPS > 0) {
		return 0
	}
	perGPU := nonneg(s.FP16Sustained) / float64(gpus)
	return c.BaseRateUSD * perGPU / c.Reference.GPUFP16TFLOPS * clamp(demand, c.DemandMin, c.DemandMax)
}

// clamp bounds v to [lo, hi]; NaN becomes lo.
func clamp(v, lo, hi float64) float64 {
	if math.IsNaN(v) || v < lo {
		return lo
	}
	return min(v, hi)
}
