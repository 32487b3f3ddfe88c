package plot

import (
	"reflect"
	"testing"

	"github.com/pog-network/pog/proof/commit"
)

// TestDecodeAudit: plot and audit encodings round-trip; every truncation, a
// trailing byte and an out-of-bounds field are refused.
func TestDecodeAudit(t *testing.T) {
	a := audit(tiny("miner"), commit.CV{7})
	a.Seed[3] = 9
	b := a.Encode()
	got, err := DecodeAudit(b)
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for n := range len(b) {
		if _, err := DecodeAudit(b[:n]); err == nil {
			t.Fatalf("%d of %d bytes decoded", n, len(b))
		}
	}
	if _, err := DecodeAudit(append(b, 0)); err == nil {
		t.Fatal("a trailing byte decoded")
	}
	p, err := DecodePlot(a.Plot.Encode())
	if err != nil || !reflect.DeepEqual(*p, a.Plot) {
		t.Fatalf("plot round trip: %+v, %v", p, err)
	}
	bad := a.Plot
	bad.Rounds = MaxRounds + 1
	if _, err := DecodePlot(bad.Encode()); err == nil {
		t.Fatal("a plot beyond its bound decoded")
	}
}
