// Package kdf computes BLAKE3's derive-key mode (blake3.DeriveKey's
// output, 32 bytes) for contexts fixed in advance. The proof and protocol
// packages derive millions of keys a run from a few contexts, mostly from
// a few hundred bytes; blake3.DeriveKey hashes the context anew and zeroes
// two 3 KiB hashers on every call, and starts a goroutine per subtree of
// material past a chunk. A Context hashes its string once; Sum compresses
// a chunk of material in place and up to sixteen side by side.
package kdf

import (
	"encoding/binary"
	"math/bits"
	"sync"

	"lukechampine.com/blake3/guts"
)

// Context is a derive-key context with its key computed.
type Context struct{ key [8]uint32 }

// New computes ctx's key: BLAKE3 of ctx in derive-key-context mode.
func New(ctx string) *Context {
	n := node([]byte(ctx), &guts.IV, 0, guts.FlagDeriveKeyContext)
	n.Flags |= guts.FlagRoot
	return &Context{key: guts.ChainingValue(n)}
}

const (
	flags = guts.FlagDeriveKeyMaterial
	wide  = guts.MaxSIMD * guts.ChunkSize // what guts.CompressBuffer takes
)

// buffers hold material of up to sixteen chunks for guts.CompressBuffer.
var buffers = sync.Pool{New: func() any { return new([wide]byte) }}

// Sum returns derive-key(ctx, concatenation of parts).
func (c *Context) Sum(parts ...[]byte) [32]byte {
	total := 0
	for _, p := range parts {
		total += len(p)
	}
	var n guts.Node
	switch {
	case total <= guts.ChunkSize:
		var chunk [guts.ChunkSize]byte
		n = guts.CompressChunk(join(chunk[:0], parts), &c.key, 0, flags)
	case total <= wide:
		buf := buffers.Get().(*[wide]byte)
		join(buf[:0], parts)
		n = guts.CompressBuffer(buf, total, &c.key, 0, flags)
		buffers.Put(buf)
	default:
		n = node(join(make([]byte, 0, total), parts), &c.key, 0, flags)
	}
	n.Flags |= guts.FlagRoot
	var out [32]byte
	words := guts.CompressNode(n)
	for i, w := range words[:8] {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}

func join(dst []byte, parts [][]byte) []byte {
	for _, p := range parts {
		dst = append(dst, p...)
	}
	return dst
}

// node is the (unfinished) node of the subtree over b, whose first chunk
// is chunk counter of the message: a chunk, up to sixteen chunks
// compressed side by side, or the parent of a left subtree of the largest
// power of two chunks below b's and a right subtree of the rest (the
// BLAKE3 tree).
func node(b []byte, key *[8]uint32, counter uint64, flags uint32) guts.Node {
	switch {
	case len(b) <= guts.ChunkSize:
		return guts.CompressChunk(b, key, counter, flags)
	case len(b) <= wide:
		buf := buffers.Get().(*[wide]byte)
		defer buffers.Put(buf)
		copy(buf[:], b)
		return guts.CompressBuffer(buf, len(b), key, counter, flags)
	}
	chunks := uint64(len(b)+guts.ChunkSize-1) / guts.ChunkSize
	left := uint64(1) << (bits.Len64(chunks-1) - 1)
	l := guts.ChainingValue(node(b[:left*guts.ChunkSize], key, counter, flags))
	r := guts.ChainingValue(node(b[left*guts.ChunkSize:], key, counter+left, flags))
	return guts.ParentNode(l, r, key, flags)
}
