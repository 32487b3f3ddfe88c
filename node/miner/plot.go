package miner

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/proof/commit"
	"github.com/pog-network/pog/proof/host/plot"
)

// Plot is a miner's built plot (SPEC §23.4, §23.9): what it announces and
// what its storage host rounds read.
type Plot struct {
	Params plot.Plot
	Root   commit.CV
	Leaves []commit.CV // kept for the audits' inclusion proofs: 32 bytes per block
	Reader plot.Reader
}

// plotSpotChecks is how many blocks OpenPlot re-hashes to check that a
// leaves file belongs to its plot file.
const plotSpotChecks = 16

// OpenPlot opens the plot of bytes (rounded down to whole blocks of
// 2^blockLog bytes of rounds layers of labels: the network's
// plot_block_log and plot_rounds) for id at path, building it first if
// the file does not exist. The block leaves are kept in path+".leaves" so
// that a restart does not re-hash the plot; a leaves file that does not
// match the plot in size or in spot-checked blocks is an error. The caller
// closes the returned file.
func OpenPlot(path string, id peer.ID, blockLog uint8, rounds uint32, bytes uint64, workers int, log *slog.Logger) (*Plot, *plot.File, error) {
	p := plot.Plot{Miner: []byte(id), BlockLog: blockLog, Rounds: rounds}
	p.Blocks = bytes >> p.BlockLog
	if err := p.Validate(); err != nil {
		return nil, nil, fmt.Errorf("miner.plot_bytes %d: %w", bytes, err)
	}
	f, err := plot.OpenFile(path, &p)
	if errors.Is(err, fs.ErrNotExist) {
		return buildPlot(path, &p, workers, log)
	}
	if err != nil {
		return nil, nil, err
	}
	pl, err := loadLeaves(path, &p, f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	log.Info("plot opened", "path", path, "bytes", p.Bytes(), "root", fmt.Sprintf("%x", pl.Root[:8]))
	return pl, f, nil
}

func buildPlot(path string, p *plot.Plot, workers int, log *slog.Logger) (*Plot, *plot.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, err
	}
	log.Info("building the plot (once)", "path", path, "bytes", p.Bytes(), "blocks", p.Blocks)
	t0 := time.Now()
	f, leaves, root, err := plot.Create(path, p, workers)
	if err != nil {
		return nil, nil, fmt.Errorf("building the plot: %w", err)
	}
	raw := make([]byte, 0, 32*len(leaves))
	for _, l := range leaves {
		raw = append(raw, l[:]...)
	}
	if err := writeFileSync(path+".leaves", raw); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("writing the plot's leaves: %w", err)
	}
	s := time.Since(t0).Seconds()
	log.Info("plot built", "bytes", p.Bytes(), "seconds", fmt.Sprintf("%.1f", s), "MB_per_s", fmt.Sprintf("%.1f", float64(p.Bytes())/s/1e6))
	return &Plot{Params: *p, Root: root, Leaves: leaves, Reader: f}, f, nil
}

func loadLeaves(path string, p *plot.Plot, f *plot.File) (*Plot, error) {
	raw, err := os.ReadFile(path + ".leaves")
	if err != nil {
		return nil, fmt.Errorf("plot leaves: %w (delete %s to rebuild the plot)", err, path)
	}
	if uint64(len(raw)) != 32*p.Blocks {
		return nil, fmt.Errorf("plot leaves file of %d bytes for %d blocks (delete %s and its .leaves to rebuild)", len(raw), p.Blocks, path)
	}
	leaves := make([]commit.CV, p.Blocks)
	for i := range leaves {
		leaves[i] = commit.CV(raw[32*i:])
	}
	blk := make([]byte, p.BlockBytes())
	for range plotSpotChecks {
		b := rand.Uint64N(p.Blocks)
		if err := f.ReadBlock(b, blk); err != nil {
			return nil, err
		}
		if p.Leaf(b, blk) != leaves[b] {
			return nil, fmt.Errorf("plot block %d does not match its leaf (delete %s and its .leaves to rebuild)", b, path)
		}
	}
	root, err := commit.Root(leaves)
	if err != nil {
		return nil, err
	}
	return &Plot{Params: *p, Root: root, Leaves: leaves, Reader: f}, nil
}

func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
