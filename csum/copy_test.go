package csum

import (
	"testing"

	"github.com/sigcheck/sigcheck/internal/crc32k"
	"github.com/sigcheck/sigcheck/internal/xxh3k"
)

// The fused copies of CRC-32C and XXH3 allocate nothing, in cache and
// streaming (the CRC-32C one made a running hash per call, two
// allocations, before its kernel).
func TestCopySumAllocs(t *testing.T) {
	for _, c := range []struct {
		name  string
		fused bool
	}{{"crc32c", crc32k.Available}, {"xxh3", xxh3k.Available}, {"xxh3-128", xxh3k.Available}} {
		if !c.fused {
			t.Logf("%s: no fused kernel on this CPU", c.name)
			continue
		}
		a := mustLookup(t, c.name)
		for _, n := range []int{100, 1 << 20, streamMin + 4099} {
			src, dst := filled(n), make([]byte, n)
			if allocs := testing.AllocsPerRun(3, func() { a.CopySum(dst, src) }); allocs != 0 {
				t.Errorf("%s: CopySum of %d bytes makes %.0f allocations", c.name, n, allocs)
			}
		}
	}
}
