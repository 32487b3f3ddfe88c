package proof

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/pog-network/pog/proof/commit"
)

// With one worker, two jobs in the queue take tiles strictly in turn, so
// neither waits for the other to finish.
func TestPoolRoundRobin(t *testing.T) {
	p := &pool{max: 1}
	var order []string // appended only by the single worker
	started, gate := make(chan struct{}), make(chan struct{})
	a := p.start(4, func(i int) {
		if i == 0 {
			close(started)
			<-gate
		}
		order = append(order, "a")
	})
	<-started // the worker holds a's first tile; a has three queued
	b := p.start(4, func(int) { order = append(order, "b") })
	close(gate)
	a.wait()
	b.wait()
	if got := strings.Join(order, ""); got != "abababab" {
		t.Fatalf("tiles ran in order %s, want abababab", got)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.workers != 0 || len(p.queue) != 0 {
		t.Fatalf("idle pool keeps %d workers and %d jobs", p.workers, len(p.queue))
	}
}

// Every tile of every job runs exactly once however many jobs share the
// pool.
func TestPoolRunsEveryTile(t *testing.T) {
	p := &pool{max: 3}
	const jobs, tiles = 8, 50
	var mu sync.Mutex
	seen := map[[2]int]int{}
	var wg sync.WaitGroup
	for j := 0; j < jobs; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.run(tiles, func(i int) {
				mu.Lock()
				seen[[2]int{j, i}]++
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	p.run(0, func(int) { t.Fatal("a job of no tiles ran one") })
	if len(seen) != jobs*tiles {
		t.Fatalf("%d tiles ran, want %d", len(seen), jobs*tiles)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("tile %v ran %d times", k, n)
		}
	}
}

// Two large rounds verified at once both finish with the verdicts each gets
// alone.
func TestConcurrentChecks(t *testing.T) {
	honest := bigParams(FP16, "honest")
	lazy := bigParams(FP32, "lazy")
	lazyOut := honestOutput(t, lazy)
	for i := 0; i < int(lazy.Tiles()); i += 2 {
		clear(lazyOut[i*lazy.TileBytes() : (i+1)*lazy.TileBytes()])
	}
	rounds := []*round{commitRound(t, honest, honestOutput(t, honest)), commitRound(t, lazy, lazyOut)}
	type opened struct {
		tiles [][]byte
		proof commit.Proof
	}
	want := make([]Result, len(rounds))
	open := make([]opened, len(rounds))
	for i, r := range rounds {
		_, tiles, pr := r.open(t)
		open[i] = opened{tiles, pr}
		want[i] = r.tr.Check(tiles, pr, nil)
	}
	if want[0].Err != nil || want[1].Err == nil {
		t.Fatalf("alone: honest %v, lazy %v", want[0].Err, want[1].Err)
	}
	got := make([]Result, len(rounds))
	var wg sync.WaitGroup
	for i, r := range rounds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = r.tr.Check(open[i].tiles, open[i].proof, nil)
		}()
	}
	wg.Wait()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("concurrent verdicts %+v, alone %+v", got, want)
	}
}
