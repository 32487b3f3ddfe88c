package testnet

import (
	"testing"

	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/testnet/report"
)

func TestEpochLine(t *testing.T) {
	adv := map[string]string{"lazy-1": "lazy", "replay-1": "replay"}
	of := func(n string) string { return adv[n] }
	rounds := []report.Round{
		{Epoch: 7, Miner: "miner-1", Verified: true}, {Epoch: 7, Miner: "miner-2", Verified: true},
		{Epoch: 7, Miner: "lazy-1"}, {Epoch: 7, Miner: "lazy-1"}, {Epoch: 7, Miner: "replay-1"},
		{Epoch: 8, Miner: "miner-1"}, {Epoch: 8, Miner: "miner-2", Verified: true},
		{Epoch: 8, Miner: "late-joiner", Reason: epoch.NoShowPrefix + "not connected"},
	}
	dets := []report.Detection{
		{Epoch: 7, Adversary: "lazy"}, {Epoch: 7, Adversary: "lazy"}, {Epoch: 7, Adversary: "replay"},
		{Epoch: 8, Adversary: ""}, {Epoch: 6, Adversary: "lazy"},
	}
	for e, want := range map[uint64]string{
		7: "epoch 7: records on every node; rounds 2 verified, 3 failed; caught lazy ×2, replay ×1",
		8: "epoch 8: records on every node; rounds 1 verified, 2 failed; caught nobody; 1 no-shows of honest miners not connected to the slot's owner; 1 failed rounds of honest miners",
		9: "epoch 9: records on every node; rounds 0 verified, 0 failed; caught nobody",
	} {
		if got := epochLine(e, rounds, dets, of); got != want {
			t.Errorf("epoch %d:\n got %s\nwant %s", e, got, want)
		}
	}
}
