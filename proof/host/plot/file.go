package plot

import (
	"errors"
	"fmt"
	"os"

	"github.com/pog-network/pog/proof/commit"
)

// File is a plot stored as one file of its blocks in index order.
type File struct {
	f      *os.File
	plot   Plot
	blocks uint64
}

// Create builds p into a new file at path (refusing to overwrite one),
// synced before it returns, and returns it open with the plot's leaves and
// root. A failed build removes the file.
func Create(path string, p *Plot, workers int) (*File, []commit.CV, commit.CV, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, commit.CV{}, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, nil, commit.CV{}, err
	}
	bs := int64(p.BlockBytes())
	leaves, root, err := Build(p, workers, func(b uint64, block []byte) error {
		_, err := f.WriteAt(block, int64(b)*bs)
		return err
	})
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, nil, commit.CV{}, err
	}
	return &File{f: f, plot: *p, blocks: p.Blocks}, leaves, root, nil
}

// ErrStalePlot is wrapped by OpenFile's error for a file whose first block
// is not p's: built for another miner, other parameters, or by an earlier
// version of the construction.
var ErrStalePlot = errors.New("plot file does not hold this plot's blocks")

// OpenFile opens an existing plot file of p, checking its size and its
// first block against its regeneration.
func OpenFile(path string, p *Plot) (*File, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && uint64(st.Size()) != p.Bytes() {
		err = fmt.Errorf("plot file %s is %d bytes, want %d", path, st.Size(), p.Bytes())
	}
	pf := &File{f: f, plot: *p, blocks: p.Blocks}
	if err == nil {
		err = pf.checkFirst(path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return pf, nil
}

func (pf *File) checkFirst(path string) error {
	got, want := make([]byte, pf.plot.BlockBytes()), make([]byte, pf.plot.BlockBytes())
	if err := pf.ReadBlock(0, got); err != nil {
		return err
	}
	pf.plot.Generate(0, want)
	if string(got) != string(want) {
		return fmt.Errorf("%w (another miner, other parameters, or built before the layered blocks of SPEC §23.4): delete %s and its .leaves to rebuild", ErrStalePlot, path)
	}
	return nil
}

// ReadBlock reads block b.
func (pf *File) ReadBlock(b uint64, dst []byte) error {
	if b >= pf.blocks || len(dst) != pf.plot.BlockBytes() {
		return errors.New("plot read out of range")
	}
	_, err := pf.f.ReadAt(dst, int64(b)<<pf.plot.BlockLog)
	return err
}

// Close closes the file.
func (pf *File) Close() error { return pf.f.Close() }
