// Package validator is the validator role of a node: it admits at most
// validator.max_miners of the announced miners (admission.go) and
// schedules rounds with them (its slots of the validator set's schedule,
// or random pauses), plays each GPU round (protocol/round) and host round
// (protocol/hostround) over a direct stream, stores their records, and
// closes each epoch into a signed, gossiped epoch record. It reaches the
// node through an Env.
package validator
