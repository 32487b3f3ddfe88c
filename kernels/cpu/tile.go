package cpu

import (
	"context"
	"fmt"

	"github.com/pog-network/pog/proof"
)

// ComputeTile implements kernels.TileComputer: it generates the t rows of
// A and t columns of B tile i needs and multiplies them, in 8·t·K bytes of
// working memory.
func (Backend) ComputeTile(ctx context.Context, p proof.Params, i uint64, dst []byte) error {
	if err := p.Validate(); err != nil {
		return err
	}
	switch {
	case i >= p.Tiles():
		return fmt.Errorf("cpu: tile %d out of range (%d tiles)", i, p.Tiles())
	case len(dst) != p.TileBytes():
		return fmt.Errorf("cpu: tile buffer of %d bytes, want %d", len(dst), p.TileBytes())
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	g, err := proof.NewGenerator(p)
	if err != nil {
		return err
	}
	t, k := int(p.Tile), int(p.K)
	b, I, J := p.TilePos(i)
	ap, bp, cp := getBuf[float32](&tilePool, t*k), getBuf[float32](&tilePool, t*k), getBuf[float32](&tilePool, t*t)
	defer func() { tilePool.Put(ap); tilePool.Put(bp); tilePool.Put(cp) }()
	a, bt, c := *ap, *bp, *cp // every line and product overwritten
	for r := 0; r < t; r++ {
		proof.Line(g, proof.MatA, b, I*p.Tile+uint32(r), a[r*k:(r+1)*k])
		proof.Line(g, proof.MatB, b, J*p.Tile+uint32(r), bt[r*k:(r+1)*k])
	}
	SgemmNT(t, t, k, a, k, bt, k, c, t, 1)
	putInt32s(dst, c) // exact: proof.Precision.MaxK
	return nil
}
