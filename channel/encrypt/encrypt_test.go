package encrypt

import (
	"fmt"
	"testing"
)

func TestSmoke(t *testing.T) {
	for _, tc := range []struct{ p, n int }{{4, 2}, {8, 2}, {6, 3}, {7, 3}, {5, 5}, {1, 1}, {3, 1}} {
		for _, mp := range []Mapping{Block, Cyclic} {
			j := localJob(t, tc.p, tc.n, mp)
			for _, a := range Algorithms() {
				for _, m := range []int{0, 1, 100} {
					if _, err := j.check(t, a, m, false); err != nil {
						t.Fatalf("p=%d N=%d %v m=%d: %v", tc.p, tc.n, mp, m, err)
					}
					if _, err := j.check(t, a, m, true); err != nil {
						t.Fatalf("unencrypted p=%d N=%d %v m=%d: %v", tc.p, tc.n, mp, m, err)
					}
				}
			}
		}
	}
	_ = fmt.Sprint()
}
