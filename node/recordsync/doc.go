// Package recordsync keeps a node's epoch records and equivocation proofs
// complete and serves its evidence: record sync (syncwire.SyncProtocol, SPEC §22)
// walks each validator's chain of epoch records back from its peers'
// heads, equivocation proofs follow, and the evidence protocol
// (syncwire.EvidenceProtocol) serves a validator's round, host and announce
// evidence of an epoch, and its checkpoints, to peer audits.
package recordsync
