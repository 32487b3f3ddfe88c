// Package proof owns what makes a round checkable: challenge parameters and
// their bounds, the keyed generation of the input matrices, and the
// verification of sampled output tiles (inclusion, then exactness by
// Freivalds' check in exact integer arithmetic).
//
// Everything here is deterministic and free of I/O so that any party holding
// a round's transcript reaches the same verdict. protocol/SPEC.md is the
// normative description; the subpackages hold its building blocks:
// philox (the generator), commit (the BLAKE3 tile tree) and sample
// (commit-reveal sampling and its detection bound).
package proof
