package recordsync

import (
	"bufio"

	"github.com/pog-network/pog/protocol/syncwire"
)

// readListHeader reads a list response's header: the item count and where
// the peer's scan stopped.
func readListHeader(r *bufio.Reader, kind string) (n uint32, next uint64, err error) {
	hdr, err := readFrame(r, syncwire.ListHeaderLen)
	if err != nil {
		return 0, 0, err
	}
	n, next, ok := syncwire.ParseListHeader(hdr)
	if !ok {
		return 0, 0, badPeer("%s header of %d bytes", kind, len(hdr))
	}
	return n, next, nil
}
