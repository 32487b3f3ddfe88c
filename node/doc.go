// Package node owns a running pog peer: its libp2p host, GossipSub topics
// and their validators, the proof stream, and the miner and validator roles.
//
// Decisions are kept apart from I/O: rules.go decides what gossip to accept
// (Accept, Reject or Ignore) from a message, the node's view and a time;
// plan.go sizes challenges; the roles wire those to libp2p, the compute
// backend and the evidence store.
package node
