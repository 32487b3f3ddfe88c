package miner

import (
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Each validator has its own place at the miner: one round in play and one
// waiting; a third is refused whoever else is playing, and an emptied queue
// is forgotten.
func TestMinerQueuePerValidator(t *testing.T) {
	m := &Miner{queues: map[peer.ID]*valQueue{}}
	a, b := peer.ID("a"), peer.ID("b")
	qa1, qa2 := m.enqueue(a), m.enqueue(a)
	if qa1 == nil || qa2 == nil || qa1 != qa2 {
		t.Fatal("a validator's round and its next were not queued together")
	}
	if m.enqueue(a) != nil {
		t.Fatal("a third round from one validator was queued")
	}
	if m.enqueue(b) == nil {
		t.Fatal("a flooding validator took another validator's place")
	}
	m.leave(a, qa1)
	if m.enqueue(a) == nil {
		t.Fatal("a place freed by a finished round was not reused")
	}
	m.leave(a, qa1)
	m.leave(a, qa1)
	if _, ok := m.queues[a]; ok || len(m.queues) != 1 {
		t.Fatalf("emptied queue kept: %d queues", len(m.queues))
	}
}

// A round's tiles are served to its validator at most maxTileFetches
// times (each serving recomputes them), to no one else, and not after the
// round is forgotten.
func TestTileFetchesBounded(t *testing.T) {
	v, other := peer.ID("v"), peer.ID("other")
	id := [32]byte{1}
	m := &Miner{served: map[[32]byte]*served{id: {c: &Challenge{Validator: v}}}}
	if _, why := m.claimFetch(id, other); why == "" {
		t.Fatal("another peer's tile request was taken")
	}
	for i := range maxTileFetches {
		if s, why := m.claimFetch(id, v); s == nil {
			t.Fatalf("request %d refused: %s", i+1, why)
		}
	}
	if _, why := m.claimFetch(id, v); why == "" {
		t.Fatalf("request %d served", maxTileFetches+1)
	}
	if _, why := m.claimFetch([32]byte{2}, v); why == "" {
		t.Fatal("a request for an unknown round was taken")
	}
}
