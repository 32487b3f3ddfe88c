package store

// EncodeRound returns a record's canonical encoding, the bytes PutRound
// stores: audits hash it to commit to an epoch's evidence.
func EncodeRound(r *RoundRecord) []byte { return encodeRound(r) }
