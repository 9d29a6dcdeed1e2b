package manifest

// The weak sums are a rolling hash of each segment: the sum of a window
// of the file is had from the previous window's in O(1), so that a scan
// finds a segment at any offset, as par2 finds its blocks by their CRC32;
// each match is then confirmed by the segment's leaf hash. The hash is a
// polynomial over the ring of 64-bit integers, h = Σ (b_k+1)·B^(n-1-k)
// (the +1 so that runs of zeros of different lengths differ), mixed by a
// multiplication: weak, but 64 bits, so that an honest file makes almost
// no false matches however large it is (with 32, a 16 GiB file would make
// tens of millions), and confirming them costs nothing.

const (
	weakSize = 8                  // bytes of a weak sum in the manifest
	weakBase = 0x100000001b3      // B: FNV's 64-bit prime, odd
	weakMix  = 0x9E3779B97F4A7C15 // 2^64/φ
)

func weakFold(h uint64) uint64 { return h * weakMix }

// weakRaw returns the unfolded sum of b.
func weakRaw(b []byte) uint64 {
	var h uint64
	for _, c := range b {
		h = h*weakBase + uint64(c) + 1
	}
	return h
}

// weakSum returns the weak sum of a segment.
func weakSum(b []byte) uint64 { return weakFold(weakRaw(b)) }

// weakTop returns B^(n-1), what the byte leaving a window of n weighs.
func weakTop(n int) uint64 {
	t := uint64(1)
	for range n - 1 {
		t *= weakBase
	}
	return t
}
