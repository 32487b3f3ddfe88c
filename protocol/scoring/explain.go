package scoring

// Breakdown is one miner's Score with every figure of SPEC §18's formula
// behind it: each part's raw figures, the references they are divided by,
// caps, weights and contributions, so an operator can see why a miner
// earned what it did. Explain computes it and ScoreMiner returns its Score,
// so the two cannot disagree.
type Breakdown struct {
	Score
	// CarriedPenalty is the penalty the miner came in with (Input.Penalty,
	// a corrupt value as counted); Score.Penalty is the one applied this
	// epoch and carried on.
	CarriedPenalty float64 `json:"carried_penalty"`
	// SustainedWeight and PeakWeight blend each class's median and best
	// round (Score.FP16Sustained, FP16Peak, …) into the class's raw figure.
	SustainedWeight float64 `json:"sustained_weight"`
	PeakWeight      float64 `json:"peak_weight"`
	// Classes are fp16 and fp32. Score.Throughput is the sum of their
	// contributions ÷ the sum of their weights (0 if that is 0); a class
	// without scored rounds this epoch weighs 0.
	Classes []Term `json:"classes"`
	// Parts are GPU, CPU, RAM and storage; Score.Total is the sum of their
	// contributions, in this order.
	Parts []Part `json:"parts"`
	// Uses says how each of Input.Rounds counted, in their order (callers
	// that list the rounds carry it with each).
	Uses []Use `json:"-"`
}

// Term is one weighted figure of a sum in §18's formula.
type Term struct {
	Name string `json:"name"`
	// Raw is the figure, in Unit, and Reference what it is divided by;
	// the quotient, bounded by Cap, is Value. A figure that is not a finite
	// non-negative number counts, and shows, as 0. Reference 0 marks a
	// figure derived from other terms (throughput, from Breakdown.Classes).
	Raw       float64 `json:"raw"`
	Unit      string  `json:"unit"`
	Reference float64 `json:"reference"`
	// Cap is Config.Cap, or for a bandwidth its dataset's or plot's share
	// of the reference (a bandwidth counts at most as much as its capacity).
	Cap float64 `json:"cap"`
	// Value is min(Cap, Raw ÷ Reference), or 0 where Score.Flags say the
	// figure is not credited.
	Value  float64 `json:"value"`
	Weight float64 `json:"weight"`
	// Contribution is Weight·Value rounded to float64, as it is added.
	Contribution float64 `json:"contribution"`
}

// Part is one of the four parts of the total:
//
//	Value = (Σ Terms' contributions, in order) · Availability · (1 − Penalty)
type Part struct {
	Name  string `json:"name"`
	Terms []Term `json:"terms"`
	// Availability is Score.Availability for the GPU part. The host parts
	// use it too, or 1 for a miner scored from host proofs alone, or 0 in
	// an epoch without a verified round (Config.AuxNeedsVerifiedRound),
	// which Note then says.
	Availability float64 `json:"availability"`
	Penalty      float64 `json:"penalty"` // Score.Penalty for the GPU part, else 0
	Value        float64 `json:"value"`
	Weight       float64 `json:"weight"`
	Contribution float64 `json:"contribution"` // Weight·Value rounded to float64
	Note         string  `json:"note,omitempty"`
}

// Use is how one round counted.
type Use string

// A round's use.
const (
	UseScored  Use = "scored"            // verified: throughput, availability and memory
	UseProbe   Use = "probe"             // verified probe: availability and memory, throughput not scored
	UseUnknown Use = "unknown precision" // verified: availability and memory, no throughput credit
	UseMissed  Use = "missed"            // never answered: lowers availability
	UseFailed  Use = "failed"            // a proven fault: zeroes the GPU part
)

// measured is raw ÷ ref capped at limit, not yet weighed.
func measured(name, unit string, raw, ref, limit float64) Term {
	return Term{Name: name, Raw: nonneg(raw), Unit: unit, Reference: ref, Cap: limit, Value: norm(raw, ref, limit)}
}

// bandwidth is a measured bandwidth bounded by its capacity's share held.
func bandwidth(name, unit string, raw, ref, limit, held float64) Term {
	t := measured(name, unit, raw, ref, limit)
	t.Cap, t.Value = held, min(held, t.Value)
	return t
}

// weigh sets t's weight and its contribution, the product rounded to
// float64 so that it is never fused into the sum it enters.
func weigh(t Term, w float64) Term {
	t.Weight, t.Contribution = w, float64(w*t.Value)
	return t
}

// sum adds the terms' contributions in order.
func sum(ts []Term) float64 {
	v := 0.0
	for _, t := range ts {
		v += t.Contribution
	}
	return v
}

// part weighs the sum of terms by availability and penalty, then by weight.
func part(name string, weight, avail, penalty float64, terms ...Term) Part {
	p := Part{Name: name, Terms: terms, Availability: avail, Penalty: penalty, Weight: weight}
	p.Value = sum(terms) * avail * (1 - penalty)
	p.Contribution = float64(weight * p.Value)
	return p
}
