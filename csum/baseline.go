package csum

import "encoding/binary"

// ReadWords reads p as 64-bit words and returns their XOR: the baseline
// that bounds every checksum, a loop that does nothing but load. Eight
// independent accumulators keep enough loads in flight to reach the
// memory's bandwidth, rather than the latency of one dependency chain.
func ReadWords(p []byte) uint64 {
	var a0, a1, a2, a3, a4, a5, a6, a7 uint64
	for len(p) >= 64 {
		q := p[:64]
		a0 ^= binary.LittleEndian.Uint64(q[0:])
		a1 ^= binary.LittleEndian.Uint64(q[8:])
		a2 ^= binary.LittleEndian.Uint64(q[16:])
		a3 ^= binary.LittleEndian.Uint64(q[24:])
		a4 ^= binary.LittleEndian.Uint64(q[32:])
		a5 ^= binary.LittleEndian.Uint64(q[40:])
		a6 ^= binary.LittleEndian.Uint64(q[48:])
		a7 ^= binary.LittleEndian.Uint64(q[56:])
		p = p[64:]
	}
	return a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7 ^ xorWords(0, p)
}
