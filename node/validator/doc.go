// Package validator is the validator role of a node: it schedules rounds
// with announced miners (its slots of the validator set's schedule, or
// random pauses), plays each GPU round (protocol/round) and host round
// (protocol/hostround) over a direct stream, stores their records, and
// closes each epoch into a signed, gossiped epoch record. It reaches the
// node through an Env.
package validator
