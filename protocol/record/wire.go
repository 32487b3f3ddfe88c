package record

import (
	"bytes"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Both encodings are built from protobuf's wire primitives: minimal
// varints, zigzag for signed values, and uvarint-length-prefixed bytes. A
// round record is tagged protobuf wire format; a host record is the same
// primitives in a fixed order, untagged. reader reads them strictly, so
// that a decoded record re-encodes to the bytes it came from.

// reader consumes wire primitives from b. Every length is checked against
// its bound before anything is taken or allocated for it.
type reader struct{ b []byte }

// rawVarint reads a varint, refusing a non-minimal one.
func (d *reader) rawVarint() (uint64, error) {
	v, n := protowire.ConsumeVarint(d.b)
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	if n != protowire.SizeVarint(v) {
		return 0, fmt.Errorf("non-minimal varint")
	}
	d.b = d.b[n:]
	return v, nil
}

// rawBytes reads a length-prefixed payload of at most max bytes. The
// result aliases the input.
func (d *reader) rawBytes(max int) ([]byte, error) {
	n, err := d.rawVarint()
	if err != nil {
		return nil, fmt.Errorf("length: %w", err)
	}
	if n > uint64(max) {
		return nil, fmt.Errorf("length %d, want at most %d", n, max)
	}
	if n > uint64(len(d.b)) {
		return nil, fmt.Errorf("length %d, only %d bytes left", n, len(d.b))
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p, nil
}

// fixed reads exactly n bytes, copied.
func (d *reader) fixed(n int) ([]byte, error) {
	if len(d.b) < n {
		return nil, fmt.Errorf("%d bytes, only %d left", n, len(d.b))
	}
	p := bytes.Clone(d.b[:n])
	d.b = d.b[n:]
	return p, nil
}

func (d *reader) tag() (protowire.Number, protowire.Type, error) {
	v, err := d.rawVarint()
	if err != nil {
		return 0, 0, fmt.Errorf("tag: %w", err)
	}
	num, typ := protowire.DecodeTag(v)
	if num < protowire.MinValidNumber {
		return 0, 0, fmt.Errorf("tag: invalid field number")
	}
	return num, typ, nil
}

// varint reads a varint field's value; zero is non-canonical (omitted).
func (d *reader) varint(typ protowire.Type) (uint64, error) {
	if typ != protowire.VarintType {
		return 0, fmt.Errorf("wire type %d, want varint", typ)
	}
	v, err := d.rawVarint()
	if err == nil && v == 0 {
		err = fmt.Errorf("explicit zero value")
	}
	return v, err
}

// fixed64 reads a fixed64 field's value; zero is non-canonical (omitted).
func (d *reader) fixed64(typ protowire.Type) (uint64, error) {
	if typ != protowire.Fixed64Type {
		return 0, fmt.Errorf("wire type %d, want fixed64", typ)
	}
	v, n := protowire.ConsumeFixed64(d.b)
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	d.b = d.b[n:]
	if v == 0 {
		return 0, fmt.Errorf("explicit zero value")
	}
	return v, nil
}

// payload reads a bytes field of at most max bytes. The result aliases the
// input.
func (d *reader) payload(typ protowire.Type, max int) ([]byte, error) {
	if typ != protowire.BytesType {
		return nil, fmt.Errorf("wire type %d, want bytes", typ)
	}
	return d.rawBytes(max)
}

// bytes is payload for a field whose empty value is omitted, returning a
// copy so that the record does not alias the caller's buffer.
func (d *reader) bytes(typ protowire.Type, max int) ([]byte, error) {
	p, err := d.payload(typ, max)
	if err == nil && len(p) == 0 {
		err = fmt.Errorf("explicit empty value")
	}
	if err != nil {
		return nil, err
	}
	return bytes.Clone(p), nil
}

// field is one field of a message: its name in errors and how to read its
// value into the message being decoded, a T.
type field[T any] struct {
	name string
	read func(m *T, d *reader, typ protowire.Type) error
}

// message is the canonical decoding of one protobuf message: its fields by
// number (a number without a reader is unknown) and which may repeat.
type message[T any] struct {
	what     string // "" for the record, else the submessage and a space
	fields   []field[T]
	repeated []protowire.Number
}

// decode reads b's fields into m. It is the one place that enforces the
// canonical form's field rules: fields in increasing number order, only a
// repeated field following itself, no unknown field. A reader's error is
// wrapped with its field's number and name.
func (s *message[T]) decode(b []byte, m *T) error {
	d := reader{b: b}
	var last protowire.Number
	for len(d.b) > 0 {
		num, typ, err := d.tag()
		if err != nil {
			return err
		}
		if num < last || num == last && !slices.Contains(s.repeated, num) {
			return fmt.Errorf("%sfield %d after field %d", s.what, num, last)
		}
		last = num
		if int(num) >= len(s.fields) || s.fields[num].read == nil {
			return fmt.Errorf("unknown %sfield %d", s.what, num)
		}
		f := s.fields[num]
		if err := f.read(m, &d, typ); err != nil {
			return fmt.Errorf("%sfield %d (%s): %w", s.what, num, f.name, err)
		}
	}
	return nil
}

// The append helpers omit zero values, as the canonical form requires.

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendFixed64(protowire.AppendTag(b, num, protowire.Fixed64Type), v)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}
