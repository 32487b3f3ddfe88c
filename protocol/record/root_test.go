package record_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/pog-network/pog/protocol/record"
	"github.com/pog-network/pog/protocol/record/recordtest"
)

// TestEncodingsGolden pins the encodings and the evidence root, which are
// signed into epoch records: the values were taken from the encoders as
// they stood in the store before this package, and must never change.
func TestEncodingsGolden(t *testing.T) {
	big := recordtest.Round(math.MaxUint64, math.MaxUint64, strings.Repeat("m", record.MaxPeerIDLen))
	big.Challenge = bytes.Repeat([]byte{'c'}, 1000)
	rounds := []*record.Round{recordtest.Round(3, 9, "miner"), recordtest.Failed(0, 0, "m"),
		recordtest.Audit(3, 9, "miner"), recordtest.Chained(), recordtest.BadTile(7), big,
		{Miner: []byte{1}, Validator: []byte{2}, Challenge: []byte{3}, Verdict: record.VerdictFailed, Reason: "x"}}
	hosts := []*record.Host{recordtest.Host(3, 7, "m"),
		{Epoch: 1, Round: 1, Miner: []byte("m"), Validator: []byte("v"), Challenge: []byte{1}, RTTNanos: 5,
			Verdict: record.VerdictFailed, Missed: true, Reason: "no root within 1s"},
		recordtest.Host(math.MaxUint64, 1<<40, "mm")}
	hosts[2].RTTNanos, hosts[2].VerifyNanos = math.MaxInt64, 1<<62

	h := sha256.New()
	for _, r := range rounds {
		h.Write(record.EncodeRound(r))
	}
	for _, r := range hosts {
		h.Write(record.EncodeHost(r))
	}
	root := func(rs []*record.Round, hs []*record.Host) []byte {
		r := record.EvidenceRoot(rs, hs)
		return r[:]
	}
	for _, c := range []struct {
		name string
		got  []byte
		want string
	}{
		{"encodings", h.Sum(nil), "6e6de4ae1712805954aedf12d19945c56f4eb65b06ce81093fe3b7b3ab07587b"},
		{"rounds root", root(rounds, nil), "55d2b06e4df78a0e712a96f3114f275ce9dacf3f496d9ebd36c3842cdbace223"},
		{"evidence root", root(rounds, hosts), "c3a5d9b60bf4f9ff78515e8038a4248a427af8991a3e83e289c10c35c272bc04"},
		{"hosts only", root(nil, hosts), "7c2a603bdfda27fc3735eba156a2220073bb5784749d46050c8399dd24327437"},
		{"empty", root(nil, nil), "e4994117b720ce73401368b4befcd3f064446615048daf165ffee86e12c6e1e0"},
	} {
		if got := hex.EncodeToString(c.got); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
