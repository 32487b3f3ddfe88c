package memwalk

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
	bad.Items = MaxItems + 1
	if _, err := DecodeParams(bad.Encode()); err == nil {
		t.Fatal("a dataset beyond its bound decoded")
	}
}
