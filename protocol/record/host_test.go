package record_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/pog-network/pog/protocol/record"
	"github.com/pog-network/pog/protocol/record/recordtest"
)

func TestHostRecordRoundTrip(t *testing.T) {
	for _, r := range []*record.Host{recordtest.Host(3, 7, "m"),
		{Epoch: 1, Round: 1, Miner: []byte("m"), Validator: []byte("v"), Challenge: []byte{1}, RTTNanos: 5,
			Verdict: record.VerdictFailed, Missed: true, Reason: "no root within 1s"}} {
		b := record.EncodeHost(r)
		got, err := record.DecodeHost(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("round trip: %+v, want %+v", got, r)
		}
		if !bytes.Equal(record.EncodeHost(got), b) {
			t.Fatal("re-encoding differs")
		}
	}
}

// TestHostRecordHostile: every truncation, an appended byte, a non-minimal
// varint and a missed flag other than 0 or 1 are refused without a panic;
// so are records that break an invariant.
func TestHostRecordHostile(t *testing.T) {
	b := record.EncodeHost(recordtest.Host(3, 7, "m"))
	for n := range len(b) {
		if _, err := record.DecodeHost(b[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: decoded", n)
		}
	}
	hostile := map[string]struct {
		b    []byte
		want string
	}{
		"trailing byte":       {append(bytes.Clone(b), 0), "1 trailing bytes"},
		"non-minimal epoch":   {append([]byte{1, 0x83, 0x00}, b[2:]...), "epoch: non-minimal varint"},
		"empty":               {nil, "unknown format"},
		"format 2":            {append([]byte{2}, b[1:]...), "unknown format"},
		"long miner":          {append([]byte{1, 3, 7, 65}, make([]byte, 65)...), "miner: length 65, want at most 64"},
		"missed flag 2":       {missedFlag(b, 2), "missed flag: 2, want 0 or 1"},
		"truncated validator": {append([]byte{1, 3, 7, 1}, 'm'), "validator: length"},
	}
	for name, c := range hostile {
		if _, err := record.DecodeHost(c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, c.want)
		}
	}
	bad := map[string]func(*record.Host){
		"verified with a reason":  func(r *record.Host) { r.Reason = "x" },
		"verified without a root": func(r *record.Host) { r.RootNanos = 0 },
		"failed without a reason": func(r *record.Host) { r.Verdict = record.VerdictFailed },
		"negative rtt":            func(r *record.Host) { r.RTTNanos = -1 },
		"no challenge":            func(r *record.Host) { r.Challenge = nil },
		"zero verdict":            func(r *record.Host) { r.Verdict = 0 },
	}
	for name, f := range bad {
		r := recordtest.Host(3, 7, "m")
		f(r)
		if _, err := record.DecodeHost(record.EncodeHost(r)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// missedFlag is b, a verified host record without a reason, with its
// missed flag (the byte before the reason's empty length) set to v.
func missedFlag(b []byte, v byte) []byte {
	c := bytes.Clone(b)
	c[len(c)-2] = v
	return c
}

func FuzzDecodeHost(f *testing.F) {
	f.Add(record.EncodeHost(recordtest.Host(3, 7, "m")))
	f.Add([]byte{1})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := record.DecodeHost(b)
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("decoded an invalid record: %v", err)
		}
		// The decoder accepts only the canonical form.
		if re := record.EncodeHost(r); !bytes.Equal(re, b) {
			t.Fatalf("re-encoding %x gives %x", b, re)
		}
	})
}
