package record

import (
	"github.com/pog-network/pog/internal/par"
	"lukechampine.com/blake3"
)

// Derive-key contexts of the two evidence roots. An epoch without host
// records keeps the rounds-only root, so that records signed before host
// records existed keep their bytes.
const (
	roundsRootContext   = "pog 2026-11-29 epoch rounds root v1"
	evidenceRootContext = "pog 2026-12-01 epoch evidence root v2"
)

// EvidenceRoot is an epoch record's rounds_root, the one commitment a
// validator signs to its evidence of an epoch: BLAKE3 derive-key over the
// concatenated BLAKE3 hashes of each round record's and then each host
// record's canonical encoding, in store order. The context is the rounds
// root's when there are no host records, the evidence root's otherwise.
func EvidenceRoot(rounds []*Round, hosts []*Host) [32]byte {
	ctx := evidenceRootContext
	if len(hosts) == 0 {
		ctx = roundsRootContext
	}
	leaves := make([]byte, 32*(len(rounds)+len(hosts)))
	par.For(len(rounds)+len(hosts), func(i int) {
		var h [32]byte
		if i < len(rounds) {
			h = blake3.Sum256(EncodeRound(rounds[i]))
		} else {
			h = blake3.Sum256(EncodeHost(hosts[i-len(rounds)]))
		}
		copy(leaves[32*i:], h[:])
	})
	var root [32]byte
	blake3.DeriveKey(root[:], ctx, leaves)
	return root
}
