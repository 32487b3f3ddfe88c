// Package node owns a running pog peer: its libp2p host, GossipSub topics
// and their validators, the validator role, and the wiring of what it runs
// beside them: the miner role (node/miner, reached through its Env,
// minerenv.go), record sync (node/recordsync), and the epoch close and
// finality computed from the evidence store (node/epoch). Audits are
// node/audit's; configuration and the home directory are node/config's.
//
// Decisions are kept apart from I/O: rules.go decides what gossip to accept
// (Accept, Reject or Ignore) from a message, the node's view and a time;
// node/plan sizes challenges; the roles wire those to libp2p, the compute
// backend and the evidence store. Wire formats are protocol's.
package node
