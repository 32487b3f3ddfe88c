// Package decodetest checks a host challenge decoder the same way for
// each proof: the encoding round-trips, every truncation and a trailing
// byte are refused.
package decodetest

import (
	"reflect"
	"testing"
)

// Check fails t unless decode(b) gives want and every prefix of b, and b
// with a byte appended, fail to decode.
func Check[T any](t testing.TB, b []byte, want T, decode func([]byte) (T, error)) {
	t.Helper()
	got, err := decode(b)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for n := range len(b) {
		if _, err := decode(b[:n]); err == nil {
			t.Fatalf("%d of %d bytes decoded", n, len(b))
		}
	}
	if _, err := decode(append(b[:len(b):len(b)], 0)); err == nil {
		t.Fatal("a trailing byte decoded")
	}
}
