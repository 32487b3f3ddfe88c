// Package audit owns the audits: Audit re-checks an evidence store (epoch
// record chains, every round and host record's signed evidence, equivocation
// proofs, scorer checkpoints) and recomputes each validator's epoch records
// and the consensus from it with node/epoch; PeerAudit fetches a peer's
// records and validators' evidence into a fresh store and audits that.
// An audit trusts nothing a validator merely states where the evidence can
// show it.
package audit
