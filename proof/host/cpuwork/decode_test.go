package cpuwork

import (
	"reflect"
	"testing"
)

// TestDecodeParams: the encoding round-trips; every truncation, a trailing
// byte and an out-of-bounds field are refused.
func TestDecodeParams(t *testing.T) {
	p := tiny("miner")
	b := p.Encode()
	got, err := DecodeParams(b)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for n := range len(b) {
		if _, err := DecodeParams(b[:n]); err == nil {
			t.Fatalf("%d of %d bytes decoded", n, len(b))
		}
	}
	if _, err := DecodeParams(append(b, 0)); err == nil {
		t.Fatal("a trailing byte decoded")
	}
	bad := *p
	bad.TableLog = MaxTableLog + 1
	if _, err := DecodeParams(bad.Encode()); err == nil {
		t.Fatal("a table beyond its bound decoded")
	}
}
