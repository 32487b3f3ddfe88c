package host

import (
	"encoding/binary"
	"fmt"
)

// Decoder reads a challenge's canonical encoding (SPEC §23.2–§23.4) field
// by field. A short read sticks: later reads return zeros and Finish
// reports it, or trailing bytes, so a decoder checks once at the end.
type Decoder struct {
	b    []byte
	what string
	err  error
}

// NewDecoder reads b, an encoding of what (named in errors).
func NewDecoder(what string, b []byte) *Decoder { return &Decoder{b: b, what: what} }

// Bytes returns the next n bytes, copied.
func (d *Decoder) Bytes(n int) []byte {
	if d.err == nil && len(d.b) < n {
		d.err = fmt.Errorf("%s truncated", d.what)
	}
	if d.err != nil {
		return make([]byte, n)
	}
	v := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return v
}

// Array32 reads 32 bytes into dst.
func (d *Decoder) Array32(dst *[32]byte) { copy(dst[:], d.Bytes(32)) }

// U8 reads a byte.
func (d *Decoder) U8() uint8 { return d.Bytes(1)[0] }

// BE32 reads a big-endian uint32.
func (d *Decoder) BE32() uint32 { return binary.BigEndian.Uint32(d.Bytes(4)) }

// BE64 reads a big-endian uint64.
func (d *Decoder) BE64() uint64 { return binary.BigEndian.Uint64(d.Bytes(8)) }

// Miner reads u8 length ‖ a miner ID.
func (d *Decoder) Miner() []byte { return d.Bytes(int(d.U8())) }

// Shape reads BE64 chains ‖ BE64 steps ‖ BE64 segment.
func (d *Decoder) Shape() Shape { return Shape{Chains: d.BE64(), Steps: d.BE64(), Segment: d.BE64()} }

// Finish reports a short read or trailing bytes.
func (d *Decoder) Finish() error {
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%s: %d trailing bytes", d.what, len(d.b))
	}
	return d.err
}
