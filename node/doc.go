// Package node owns a running pog peer: its libp2p host, GossipSub topics
// and their validators, the validator role, epoch records, finality and
// audits, and the wiring of what it runs beside them: the miner role
// (node/miner, reached through its Env, minerenv.go) and record sync
// (node/recordsync). Its configuration and home directory are
// node/config's.
//
// Decisions are kept apart from I/O: rules.go decides what gossip to accept
// (Accept, Reject or Ignore) from a message, the node's view and a time;
// plan.go sizes challenges; the roles wire those to libp2p, the compute
// backend and the evidence store. Wire formats are protocol's.
package node
