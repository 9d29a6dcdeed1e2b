package channel

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/sigcheck/sigcheck/tree"
)

func TestStandaloneValidation(t *testing.T) {
	for _, faulty := range [][]int{nil, {3}, {0, 7, 8, 40}} {
		comms := local(t, 2)
		orig := pattern(100_000, 11)
		copyOf := bytes.Clone(orig)
		for _, j := range faulty {
			copyOf[j*1000+17] ^= 0x80
		}
		var got []int
		err := spmd(t, comms, func(ctx context.Context, c Comm) error {
			if c.Rank() == 0 {
				return ValidateSender(ctx, c, 1, orig, tree.Segment(1000))
			}
			var err error
			got, err = ValidateReceiver(ctx, c, 0, copyOf, tree.Segment(1000))
			return err
		})
		if err != nil {
			t.Fatalf("%v: %v", faulty, err)
		}
		if !slices.Equal(got, faulty) || !bytes.Equal(copyOf, orig) {
			t.Errorf("%v: repaired %v, equal %v", faulty, got, bytes.Equal(copyOf, orig))
		}
	}
}
