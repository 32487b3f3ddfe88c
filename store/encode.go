package store

// EncodeRound returns a record's canonical encoding, the bytes PutRound
// stores: audits hash it to commit to an epoch's evidence.
func EncodeRound(r *RoundRecord) []byte { return encodeRound(r) }

// DecodeRound parses and validates a canonical record encoding, as read
// from a peer: every length is bounded before it is allocated.
func DecodeRound(b []byte) (*RoundRecord, error) { return decodeRound(b) }
