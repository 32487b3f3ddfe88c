package host

import (
	"strings"
	"sync"

	"github.com/pog-network/pog/internal/kdf"
)

// Derive returns BLAKE3 derive-key(contextPrefix+ctx, concatenation of
// parts). Checkpoint leaves and walk steps derive millions of keys from a
// few contexts, so each context's key is computed once (internal/kdf).
func Derive(ctx string, parts ...[]byte) [32]byte {
	return contextOf(ctx).Sum(parts...)
}

// contexts holds each context's key, by ctx without the prefix.
var contexts sync.Map // string → *kdf.Context

func contextOf(ctx string) *kdf.Context {
	if c, ok := contexts.Load(ctx); ok {
		return c.(*kdf.Context)
	}
	// A clone is stored, so that ctx, often built by the caller, need
	// not be allocated on every call.
	c, _ := contexts.LoadOrStore(strings.Clone(ctx), kdf.New(contextPrefix+ctx))
	return c.(*kdf.Context)
}
