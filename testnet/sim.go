package testnet

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

// simBackend is the CPU backend paced to a simulated throughput: it
// computes the real product (so proofs stay honest) and then waits until
// the challenge has taken as long as its simulated device would take.
// mode makes it cheat like one adversary class.
type simBackend struct {
	cpu.Backend
	dev   *simDevice    // its device time: own, or shared (timeshare)
	extra time.Duration // added latency (the slow outsourcer)
	mode  string        // "", lazy, precision, replay, sybil-follower
	share *sybilShare   // set for both members of a sybil pair

	mu    sync.Mutex
	first kernels.Job // replay: the output it keeps answering with
}

// sybilShare is the one computation a sybil pair shares.
type sybilShare struct {
	mu     sync.Mutex
	latest *simJob
	ready  chan struct{} // closed once latest is set
}

func newSybilShare() *sybilShare { return &sybilShare{ready: make(chan struct{})} }

func (b *simBackend) Start(p proof.Params, o kernels.Options) (kernels.Job, error) {
	j, err := b.Backend.Start(p, o)
	if err != nil {
		return nil, err
	}
	return &simJob{Job: j, b: b, p: p}, nil
}

type simJob struct {
	kernels.Job
	b     *simBackend
	p     proof.Params
	start time.Time
	due   time.Time // when the simulated device finishes it
	cvs   []commit.CV
	keep  bool    // shared with a sybil partner or replayed: not closed
	src   *simJob // sybil follower: the partner's job it committed to
}

func (j *simJob) Generate(ctx context.Context) error {
	j.start = time.Now()
	if j.b.mode == "sybil-follower" {
		return nil // it will copy its partner's output
	}
	j.due = j.b.dev.reserve(j.start, j.p.FLOPs())
	return j.Job.Generate(ctx)
}

func (j *simJob) Multiply(ctx context.Context) error {
	if j.b.mode == "sybil-follower" {
		select {
		case <-j.b.share.ready:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := j.Job.Multiply(ctx); err != nil {
		return err
	}
	wait := time.Until(j.due) + j.b.extra
	select {
	case <-time.After(wait):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (j *simJob) TileCVs(ctx context.Context) ([]commit.CV, error) {
	switch j.b.mode {
	case "sybil-follower":
		s := j.b.share
		s.mu.Lock()
		defer s.mu.Unlock()
		j.src = s.latest
		return j.src.cvs, nil
	case "replay":
		j.b.mu.Lock()
		first := j.b.first
		j.b.mu.Unlock()
		if first != nil {
			return first.(*simJob).cvs, nil
		}
	}
	cvs := make([]commit.CV, j.p.Tiles())
	tile := make([]byte, j.p.TileBytes())
	for i := range cvs {
		if err := j.Tile(uint64(i), tile); err != nil {
			return nil, err
		}
		cvs[i] = commit.TileCV(tile, uint64(i))
	}
	j.cvs = cvs
	switch {
	case j.b.mode == "replay":
		j.b.mu.Lock()
		j.b.first, j.keep = j, true
		j.b.mu.Unlock()
	case j.b.share != nil:
		s := j.b.share
		s.mu.Lock()
		if s.latest == nil {
			close(s.ready)
		}
		s.latest, j.keep = j, true
		s.mu.Unlock()
	}
	return cvs, nil
}

// Tile serves what the miner committed to: its own output, altered by the
// cheating mode, or the output it copies.
func (j *simJob) Tile(i uint64, dst []byte) error {
	switch j.b.mode {
	case "sybil-follower":
		return j.src.Job.Tile(i, dst)
	case "replay":
		j.b.mu.Lock()
		first := j.b.first
		j.b.mu.Unlock()
		if first != nil && first != kernels.Job(j) {
			return first.(*simJob).Job.Tile(i, dst)
		}
	}
	if err := j.Job.Tile(i, dst); err != nil {
		return err
	}
	switch j.b.mode {
	case "lazy":
		if i%2 == 0 {
			clear(dst) // skips every other tile
		}
	case "precision":
		roundTiles(dst)
	}
	return nil
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

func (j *simJob) Close() error {
	if j.keep {
		return nil
	}
	return j.Job.Close()
}
