package proof

import (
	"runtime"
	"sync"
)

// tilePool checks the tiles of every verification in progress in the
// process on one set of workers.
var tilePool pool

// pool runs the tiles of concurrent jobs (one per verification) on at most
// GOMAXPROCS workers, taking one tile (for verification, a group of up to
// maxShare tiles sharing their rows of A) at a time from each job in turn: a
// validator checking several miners' rounds at once uses every core, and a
// large round does not hold back the small ones queued behind it. Workers
// exist only while there are tiles to take.
type pool struct {
	max int // workers; 0 means GOMAXPROCS

	mu      sync.Mutex
	queue   []*poolJob // jobs with tiles not yet taken, in arrival order
	turn    int        // the queue position that takes the next tile
	workers int
}

// poolJob is one verification's tiles.
type poolJob struct {
	n, next, done int // tiles, the next to take, those finished
	run           func(i int)
	finished      chan struct{}
}

// run calls f(i) for i in [0, n) on the pool's workers and returns when all
// calls have.
func (s *pool) run(n int, f func(i int)) { s.start(n, f).wait() }

// start queues a job of n tiles.
func (s *pool) start(n int, f func(i int)) *poolJob {
	j := &poolJob{n: n, run: f, finished: make(chan struct{})}
	if n == 0 {
		close(j.finished)
		return j
	}
	limit := s.max
	if limit == 0 {
		limit = runtime.GOMAXPROCS(0)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, j)
	for add := min(n, limit-s.workers); add > 0; add-- {
		s.workers++
		go s.work()
	}
	return j
}

func (j *poolJob) wait() { <-j.finished }

// work takes tiles until the queue is empty.
func (s *pool) work() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.queue) > 0 {
		s.turn %= len(s.queue)
		j := s.queue[s.turn]
		i := j.next
		j.next++
		if j.next == j.n {
			s.queue = append(s.queue[:s.turn], s.queue[s.turn+1:]...)
		} else {
			s.turn++
		}
		s.mu.Unlock()
		j.run(i)
		s.mu.Lock()
		if j.done++; j.done == j.n {
			close(j.finished)
		}
	}
	s.workers--
}
