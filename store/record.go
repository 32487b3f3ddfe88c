package store

import "github.com/pog-network/pog/protocol/record"

// The records the store keeps are protocol/record's, which owns their
// canonical encodings (hashed into signed epoch records); the store keeps
// those bytes under its keys. These names are its callers' view of them.
type (
	RoundRecord = record.Round
	HostRecord  = record.Host
	TileVerdict = record.TileVerdict
	TileData    = record.TileData
	Verdict     = record.Verdict
)

// Verdicts.
const (
	VerdictVerified = record.VerdictVerified
	VerdictFailed   = record.VerdictFailed
)

// Record bounds, as the store's callers size buffers and keys by them.
const (
	MaxPeerIDLen        = record.MaxPeerIDLen
	MaxRoundLen         = record.MaxRoundLen
	MaxReasonLen        = record.MaxReasonLen
	MaxTileReasonLen    = record.MaxTileReasonLen
	MaxHostChallengeLen = record.MaxHostChallengeLen
	MaxHostOpeningLen   = record.MaxHostOpeningLen
)
