package proof

import (
	"encoding/hex"
	"testing"

	"github.com/pog-network/pog/proof/commit"
)

func fill(b byte) (x [32]byte) {
	for i := range x {
		x[i] = b
	}
	return x
}

// TestStepVectors pins the step-nonce and beacon derivations; SPEC.md §8.5
// lists the same values.
func TestStepVectors(t *testing.T) {
	id, secret := fill(0x11), fill(0x22)
	roots := []commit.CV{fill(0x33), fill(0x44)}
	d := StepDigest(roots)
	vectors := []struct{ name, got, want string }{
		{"beacon(secret, 0)", hex.EncodeToString(ptr(Beacon(secret, 0))), "1652196eb70d59addd4fef8f688218736f46812e64b266617d9d1a30cd096a3c"},
		{"beacon(secret, 7)", hex.EncodeToString(ptr(Beacon(secret, 7))), "f01eaf16c0448ce8290c9401fdd921ac0bce5580a3b28dad800bea16c98b8419"},
		{"step digest", hex.EncodeToString(d[:]), "82399a46c48b41bea506c4d1af0e397655f1f208085f15327c5bc4537ac3686d"},
		{"nonce(1, sub 0, zero beacon)", hex.EncodeToString(ptr(StepNonce(id, 1, 0, d, [32]byte{}))), "cc66f5c8cae8e46fdb6da6aba2650a2b0e2dabaf732885ea32edc1ca796a6341"},
		{"nonce(2, sub 1, beacon 0)", hex.EncodeToString(ptr(StepNonce(id, 2, 1, d, Beacon(secret, 0)))), "6a440ea671a2d694afca6cf8c62829acba24be1ccb093fcdec5fc477b50ef87d"},
	}
	for _, v := range vectors {
		if v.got != v.want {
			t.Errorf("%s = %s, want %s", v.name, v.got, v.want)
		}
	}
}

func ptr(b [32]byte) []byte { return b[:] }

// TestChainDependencies: step i's nonce changes with step i−1's roots and
// with the beacon answering step i−2, and with nothing it must not depend on.
func TestChainDependencies(t *testing.T) {
	p := Params{Precision: FP16, Batch: 1, M: 32, K: 8, N: 32, Tile: 16, Miner: []byte("m")}
	c := Chain{ID: fill(1), Template: []Params{p, p}, Steps: 4}
	roots := [][]commit.CV{{fill(2), fill(3)}, {fill(4), fill(5)}, {fill(6), fill(7)}}
	beacons := [][32]byte{fill(8), fill(9)}
	base, err := c.StepParams(2, roots, beacons)
	if err != nil {
		t.Fatal(err)
	}
	if base[0].Nonce == base[1].Nonce {
		t.Error("sub-challenges of a step share a nonce")
	}
	alt := func(f func(r [][]commit.CV, b [][32]byte)) [32]byte {
		r := [][]commit.CV{append([]commit.CV{}, roots[0]...), append([]commit.CV{}, roots[1]...), roots[2]}
		b := append([][32]byte{}, beacons...)
		f(r, b)
		ps, err := c.StepParams(2, r, b)
		if err != nil {
			t.Fatal(err)
		}
		return ps[0].Nonce
	}
	if alt(func(r [][]commit.CV, _ [][32]byte) { r[1][1][0] ^= 1 }) == base[0].Nonce {
		t.Error("step 2 does not depend on step 1's roots")
	}
	if alt(func(_ [][]commit.CV, b [][32]byte) { b[0][0] ^= 1 }) == base[0].Nonce {
		t.Error("step 2 does not depend on beacon 0")
	}
	if alt(func(r [][]commit.CV, b [][32]byte) { r[0][0][0] ^= 1; b[1][0] ^= 1 }) != base[0].Nonce {
		t.Error("step 2 depends on step 0's roots or beacon 1")
	}
	if _, err := c.StepParams(2, roots, nil); err == nil {
		t.Error("step 2 derived without beacon 0")
	}
	if _, err := c.StepParams(3, roots[:2], beacons); err == nil {
		t.Error("step 3 derived without step 2's roots")
	}
}

func TestGroups(t *testing.T) {
	p := Params{Precision: FP16, Batch: 1, M: 32, K: 8, N: 32, Tile: 16, Miner: []byte("m")}
	c := Chain{Template: []Params{p, p}, Steps: 3} // 4 tiles per sub, 8 per step
	gs := c.Groups([]uint64{0, 3, 4, 9, 23})
	want := []Group{{0, 0, []uint64{0, 3}, 0}, {0, 1, []uint64{0}, 2}, {1, 0, []uint64{1}, 3}, {2, 1, []uint64{3}, 4}}
	if len(gs) != len(want) {
		t.Fatalf("groups %v, want %v", gs, want)
	}
	for i := range gs {
		if gs[i].Step != want[i].Step || gs[i].Sub != want[i].Sub || gs[i].First != want[i].First || len(gs[i].Tiles) != len(want[i].Tiles) || gs[i].Tiles[0] != want[i].Tiles[0] {
			t.Errorf("group %d = %+v, want %+v", i, gs[i], want[i])
		}
	}
	if err := (&Chain{Template: []Params{p}, Steps: MaxRoundRoots + 1}).Validate(); err == nil {
		t.Error("too many roots accepted")
	}
}
