package encrypt

// arena hands out the buffers of one all-gather (frames sent over the
// Comm, receive buffers, sealed blocks) from chunks it keeps, so that a
// run of all-gathers allocates little once warm (HS1 at 1 MiB, p=4:
// 14.8 MB a call before, 2.7 after). A Gatherer keeps two, by the parity
// of the all-gather's sequence number, and empties one as the all-gather
// of its parity starts: the ciphertexts HS1 and HS2 leave in the node's
// shared memory are read by the node's other ranks before they pass the
// next all-gather's first barrier, which this rank passes before it
// starts all-gather c+2. Frames handed to another rank through the Node
// are not from an arena: the only order between that rank's reading and
// this one's reuse would run through the network, which Go's race
// detector cannot see.
type arena struct {
	chunks [][]byte
	i, off int
}

const arenaChunk = 256 << 10

func (a *arena) reset() { a.i, a.off = 0, 0 }

// alloc returns n bytes, not zeroed: every caller writes them all.
func (a *arena) alloc(n int) []byte {
	for a.i < len(a.chunks) {
		c := a.chunks[a.i]
		if len(c)-a.off >= n {
			b := c[a.off : a.off+n : a.off+n]
			a.off += n
			return b
		}
		if a.off == 0 && len(c) < n {
			// A chunk too small for this size even when empty: replace
			// it, so that a repeated large all-gather finds room.
			a.chunks[a.i] = make([]byte, max(n, arenaChunk))
			continue
		}
		a.i++
		a.off = 0
	}
	c := make([]byte, max(n, arenaChunk))
	a.chunks = append(a.chunks, c)
	a.i, a.off = len(a.chunks)-1, n
	return c[:n:n]
}
