package round

// Epochs assigns rounds to epochs so that none is stored after its epoch's
// record is signed: a round belongs to the epoch it starts in unless that
// epoch has begun closing, and then to the next open one. The caller holds
// a lock around it.
type Epochs struct {
	closed   uint64 // epochs < closed are closing or closed
	inflight map[uint64]int
}

// Begin registers a round starting in epoch e and returns the epoch it
// belongs to, which its challenge must carry.
func (t *Epochs) Begin(e uint64) uint64 {
	if t.inflight == nil {
		t.inflight = map[uint64]int{}
	}
	e = max(e, t.closed)
	t.inflight[e]++
	return e
}

// End unregisters a round of epoch e once it is stored (or abandoned).
func (t *Epochs) End(e uint64) {
	if t.inflight[e]--; t.inflight[e] <= 0 {
		delete(t.inflight, e)
	}
}

// Close marks every epoch up to e as closing: later rounds go to e+1 or
// later. It returns how many rounds of e are still in flight; the record
// of e may be signed once InFlight(e) is 0.
func (t *Epochs) Close(e uint64) int {
	t.closed = max(t.closed, e+1)
	return t.inflight[e]
}

// Pending is the number of registered rounds of epochs below e: a caller
// that skips signing those epochs waits for it to reach 0 before it signs
// e, so that no round of theirs is stored after it.
func (t *Epochs) Pending(e uint64) int {
	n := 0
	for k, c := range t.inflight {
		if k < e {
			n += c
		}
	}
	return n
}

// InFlight is the number of registered rounds of epoch e.
func (t *Epochs) InFlight(e uint64) int { return t.inflight[e] }
