// Package record owns the canonical encodings of a validator's evidence:
// round records (one miner's round, format 1, strict protobuf wire format)
// and host records (one host round), and the evidence root over an
// epoch's records that a validator signs into its epoch record.
//
// Every byte here is consensus-critical: a validator's signed root and
// every auditor's recomputation of it hash these encodings, so an encoding
// never changes once records carry it; a new field is added so that
// records without it keep their bytes. The decoders accept only the
// canonical form (a decoded record re-encodes to its input) and bound
// every length before allocating, since the bytes come from disk or from
// peers. A store keeps the bytes; it does not define them.
package record
