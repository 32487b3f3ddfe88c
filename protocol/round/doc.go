// Package round holds the logic of one chained round (SPEC.md §1, §16) as
// pure state machines: the validator's (Validator) and the miner's (Miner).
// Each takes events (a timer, a root, a beacon, the commitment, tiles) and
// returns the actions the caller must perform (send, reveal, fetch, store a
// verdict). Nothing here touches the network, the store or the clock: node
// wires the machines to libp2p streams, gossip and Pebble, and passes times
// as readings of its monotonic clock.
//
// Epochs is the rule that ties a round to an epoch without racing the
// epoch's close.
package round
