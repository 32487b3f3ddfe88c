// Package plan sizes what a validator sends a miner, as pure functions of
// the validator's settings, the miner's announce and what was measured of
// it before: a GPU round's challenge (Challenge, the precision class of the
// next round, the pause after a round) and a host round's (Host, grown for
// a distant miner). It does no I/O; the validator role in package node
// sends the plans and times the answers.
package plan
