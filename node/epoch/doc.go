// Package epoch owns what a node computes from its evidence store at and
// after an epoch's end: the validator's epoch close (Scorer, scoring
// input from round and host records, availability), scorer checkpoints and
// the evidence retention bound, finality (final sets, the freeze rule, the
// rounds cutoff), consensus over the stored records, pricing and the score
// breakdowns `pog explain` shows. Every result is a function of the store's
// contents, so an audit recomputes exactly what a validator published; the
// arithmetic is kept free of fused multiply-adds (fma_test.go).
package epoch
