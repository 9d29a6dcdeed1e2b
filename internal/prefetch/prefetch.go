// Package prefetch asks the processor to bring memory into its caches
// ahead of use.
//
// Hashing a buffer in many short calls (a Merkle tree's 2 KiB segments)
// runs at half the speed of one long call when the data comes from main
// memory: each call's own prefetching stops at its end, so every segment
// starts with a cache miss. Prefetching the next few kilobytes before
// hashing a segment brings the tree to the speed of one call (measured in
// tree's BenchmarkBuild). Go has no prefetch intrinsic, hence the assembly.
package prefetch

// Line is the cache line size assumed: one prefetch per Line bytes.
const Line = 64

// Bytes hints that b will be read soon. It never faults and never changes
// anything; on platforms without an implementation it does nothing.
func Bytes(b []byte) {
	if len(b) > 0 {
		prefetch(&b[0], len(b))
	}
}
