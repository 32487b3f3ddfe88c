package cpuwork

import (
	"testing"

	"github.com/pog-network/pog/proof/host/internal/decodetest"
)

// TestDecodeParams: the encoding round-trips; truncations, a trailing byte
// and an out-of-bounds field are refused.
func TestDecodeParams(t *testing.T) {
	p := tiny("miner")
	decodetest.Check(t, p.Encode(), p, DecodeParams)
	bad := *p
	bad.TableLog = MaxTableLog + 1
	if _, err := DecodeParams(bad.Encode()); err == nil {
		t.Fatal("a table beyond its bound decoded")
	}
	w := *p
	w.WindowMs, w.RunMs, w.ScaleLog = 1500, 1400, 10
	decodetest.Check(t, w.Encode(), &w, DecodeParams)
	for _, b := range []Params{{WindowMs: MaxWindowMs + 1, RunMs: 1}, {WindowMs: 1500, RunMs: 1501}, {WindowMs: 1500}, {RunMs: 1}, {ScaleLog: MaxScaleLog + 1}} {
		v := *p
		v.WindowMs, v.RunMs, v.ScaleLog = b.WindowMs, b.RunMs, b.ScaleLog
		if _, err := DecodeParams(v.Encode()); err == nil {
			t.Errorf("window %d ms, run %d ms, scale 2^%d decoded", v.WindowMs, v.RunMs, v.ScaleLog)
		}
	}
}
