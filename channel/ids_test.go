package channel

import (
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// TestIDWindow: every id is new once and a duplicate after, however the
// ids of a link come out of order (within the window), and ids far ahead
// move the window without losing the order of what follows.
func TestIDWindow(t *testing.T) {
	params := gopter.DefaultTestParametersWithSeed(1)
	params.MinSuccessfulTests = 300
	props := gopter.NewProperties(params)
	props.Property("each id opens once", prop.ForAll(
		func(start uint64, steps []uint16, swaps []uint8) bool {
			ids := make([]uint64, len(steps))
			id := start
			for i, s := range steps {
				id += uint64(s%200) + 1 // gaps: ids of other peers
				ids[i] = id
			}
			for _, s := range swaps { // near neighbours swapped: two goroutines sending
				if i := int(s); i+1 < len(ids) {
					ids[i], ids[i+1] = ids[i+1], ids[i]
				}
			}
			var w idWindow
			for _, id := range ids {
				if !w.open(id) || w.open(id) || !w.seen(id) {
					return false
				}
			}
			return true
		},
		gen.UInt64Range(0, 1<<40), gen.SliceOf(gen.UInt16()), gen.SliceOf(gen.UInt8()),
	))
	props.TestingRun(t)
}
