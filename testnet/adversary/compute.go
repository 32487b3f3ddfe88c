package adversary

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/commit"
)

// Backend is the CPU backend paced to a simulated throughput: it
// computes the real product (so proofs stay honest) and then waits until
// the step has taken as long as its simulated device would take. Mode
// makes it cheat like one adversary class; the tiles it recomputes for a
// validator (ComputeTile) cheat the same way as the output it hashed.
type Backend struct {
	cpu.Backend
	Device *Device       // its device time: own, or shared (timeshare)
	Extra  time.Duration // added latency per step (the slow outsourcer)
	Mode   string        // "", lazy, precision, replay, sybil-follower
	Share  *SybilShare   // set for both members of a sybil pair

	mu     sync.Mutex
	first  *simOutput                // replay: the output it keeps answering with
	copied map[[32]byte]proof.Params // by nonce: whose output a step committed to
}

// simOutput is a step's parameters and tile chaining values.
type simOutput struct {
	p   proof.Params
	cvs []commit.CV
}

// SybilShare is the one computation a sybil pair shares.
type SybilShare struct {
	mu     sync.Mutex
	latest *simOutput
	ready  chan struct{} // closed once latest is set
}

// NewSybilShare is the output a sybil pair shares, not yet computed.
func NewSybilShare() *SybilShare { return &SybilShare{ready: make(chan struct{})} }

func (b *Backend) Start(p proof.Params, o kernels.Options) (kernels.Job, error) {
	j, err := b.Backend.Start(p, o)
	if err != nil {
		return nil, err
	}
	return &simJob{Job: j, b: b, p: p}, nil
}

// ComputeTile recomputes what the miner committed to: its own output,
// altered by the cheating mode, or the output it copied.
func (b *Backend) ComputeTile(ctx context.Context, p proof.Params, i uint64, dst []byte) error {
	b.mu.Lock()
	src, copied := b.copied[p.Nonce]
	b.mu.Unlock()
	if copied {
		return b.Backend.ComputeTile(ctx, src, i, dst)
	}
	if err := b.Backend.ComputeTile(ctx, p, i, dst); err != nil {
		return err
	}
	b.alter(i, dst)
	return nil
}

func (b *Backend) alter(i uint64, dst []byte) {
	switch b.Mode {
	case "lazy":
		if i%2 == 0 {
			clear(dst) // skips every other tile
		}
	case "precision":
		roundTiles(dst)
	}
}

func (b *Backend) copy(p proof.Params, from *simOutput) []commit.CV {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.copied == nil {
		b.copied = map[[32]byte]proof.Params{}
	}
	b.copied[p.Nonce] = from.p
	return from.cvs
}

type simJob struct {
	kernels.Job
	b     *Backend
	p     proof.Params
	start time.Time
	due   time.Time // when pace let it finish
	begun bool      // begin was called and end not yet
}

func (j *simJob) Generate(ctx context.Context) error {
	j.start, j.begun = j.b.Device.begin(time.Now()), true
	if j.b.Mode == "sybil-follower" {
		return nil // it will copy its partner's output
	}
	return j.Job.Generate(ctx)
}

func (j *simJob) Multiply(ctx context.Context) error {
	if j.b.Mode == "sybil-follower" {
		select {
		case <-j.b.Share.ready:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return j.Job.Multiply(ctx)
}

// cvs hashes the output as the mode alters it; an unaltered output is
// hashed by the CPU backend itself, on the SIMD path.
func (j *simJob) cvs(ctx context.Context) ([]commit.CV, error) {
	if j.b.Mode != "lazy" && j.b.Mode != "precision" {
		return j.Job.TileCVs(ctx)
	}
	cvs := make([]commit.CV, j.p.Tiles())
	tile := make([]byte, j.p.TileBytes())
	for i := range cvs {
		if err := j.Job.Tile(uint64(i), tile); err != nil {
			return nil, err
		}
		j.b.alter(uint64(i), tile)
		cvs[i] = commit.TileCV(tile, uint64(i))
	}
	return cvs, nil
}

// Close ends the job on its device.
func (j *simJob) Close() error {
	if j.begun {
		j.begun = false
		j.b.Device.end(j.due)
	}
	return j.Job.Close()
}

// pace waits until the step has taken as long as its simulated device
// would take for it, hashing included, after the jobs booked on that
// device before it (a device shared by the timeshare identities).
func (j *simJob) pace(ctx context.Context) error {
	due := j.b.Device.reserve(j.start, j.p.FLOPs(), string(j.p.Miner)+string(j.p.Nonce[:]))
	j.due = due
	select {
	case <-time.After(time.Until(due) + j.b.Extra):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (j *simJob) TileCVs(ctx context.Context) ([]commit.CV, error) {
	switch j.b.Mode {
	case "sybil-follower":
		if err := j.pace(ctx); err != nil {
			return nil, err
		}
		s := j.b.Share
		s.mu.Lock()
		defer s.mu.Unlock()
		return j.b.copy(j.p, s.latest), nil
	case "replay":
		j.b.mu.Lock()
		first := j.b.first
		j.b.mu.Unlock()
		if first != nil {
			if err := j.pace(ctx); err != nil {
				return nil, err
			}
			return j.b.copy(j.p, first), nil
		}
	}
	cvs, err := j.cvs(ctx)
	if err != nil {
		return nil, err
	}
	if err := j.pace(ctx); err != nil {
		return nil, err
	}
	out := &simOutput{p: j.p, cvs: cvs}
	switch {
	case j.b.Mode == "replay":
		j.b.mu.Lock()
		j.b.first = out
		j.b.mu.Unlock()
	case j.b.Share != nil:
		s := j.b.Share
		s.mu.Lock()
		if s.latest == nil {
			close(s.ready)
		}
		s.latest = out
		s.mu.Unlock()
	}
	return cvs, nil
}

// roundTiles rounds every value to fp16's 11-bit significand, as an fp16
// accumulator would leave a sum.
func roundTiles(b []byte) {
	for o := 0; o+4 <= len(b); o += 4 {
		v := int32(uint32(b[o]) | uint32(b[o+1])<<8 | uint32(b[o+2])<<16 | uint32(b[o+3])<<24)
		if v == 0 {
			continue
		}
		e := math.Ilogb(math.Abs(float64(v))) - 10
		if e > 0 {
			q := math.Ldexp(1, e)
			v = int32(math.RoundToEven(float64(v)/q) * q)
		}
		b[o], b[o+1], b[o+2], b[o+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
}
