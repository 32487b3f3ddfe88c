package host

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"

	"lukechampine.com/blake3"
	"lukechampine.com/blake3/guts"
)

// Derive returns BLAKE3 derive-key(contextPrefix+ctx, concatenation of
// parts). Checkpoint leaves and walk steps derive millions of keys from a
// few contexts, so each context's key is computed once, and material of
// one chunk (1 KiB) is compressed in place; longer material goes through
// blake3.DeriveKey.
func Derive(ctx string, parts ...[]byte) [32]byte {
	var buf [guts.ChunkSize]byte
	material := buf[:0]
	for _, p := range parts {
		material = append(material, p...)
	}
	if len(material) > guts.ChunkSize {
		// A copy, so that buf does not escape: one allocation for the
		// rare long material, none for the usual short one.
		return deriveLong(ctx, slices.Clone(material))
	}
	var out [32]byte
	n := guts.CompressChunk(material, contextKey(ctx), 0, guts.FlagDeriveKeyMaterial)
	n.Flags |= guts.FlagRoot
	words := guts.CompressNode(n)
	for i, w := range words[:8] {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}

// deriveLong is Derive of material longer than a chunk.
func deriveLong(ctx string, material []byte) (out [32]byte) {
	blake3.DeriveKey(out[:], contextPrefix+ctx, material)
	return out
}

// contextKeys holds each context's key: BLAKE3 of contextPrefix+ctx in
// derive-key-context mode (contexts are far shorter than a chunk).
var contextKeys sync.Map // string → *[8]uint32

func contextKey(ctx string) *[8]uint32 {
	if k, ok := contextKeys.Load(ctx); ok {
		return k.(*[8]uint32)
	}
	n := guts.CompressChunk([]byte(contextPrefix+ctx), &guts.IV, 0, guts.FlagDeriveKeyContext)
	n.Flags |= guts.FlagRoot
	words := guts.CompressNode(n)
	key := [8]uint32(words[:8])
	// A clone is stored, so that ctx, often built by the caller, need
	// not be allocated on every call.
	k, _ := contextKeys.LoadOrStore(strings.Clone(ctx), &key)
	return k.(*[8]uint32)
}
