package tree

import (
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// Leaf, Inner and NewLeaf are how code outside the package (manifests on
// disk) hashes trees: they must agree with Build node for node, for every
// kind of hash, and NewLeaf over any split of a segment with Leaf.
func TestLeafInnerNewLeafAgreeWithBuild(t *testing.T) {
	params := gopter.DefaultTestParametersWithSeed(28)
	params.MinSuccessfulTests = 200
	props := gopter.NewProperties(params)
	for _, name := range []string{"xxh3", "xxh3-128", "crc32c", "murmur64a"} {
		h, err := LookupHash(name)
		if err != nil {
			t.Fatal(err)
		}
		props.Property(name+": Leaf and Inner rebuild Build's nodes; NewLeaf in pieces is Leaf", prop.ForAll(
			func(data []byte, seg int, cut int) bool {
				tr, err := Build(data, Segment(seg), UseHash(name))
				if err != nil {
					return false
				}
				n := tr.Segments()
				for j := range n {
					off, l := tr.SegmentRange(j)
					s := data[off : off+l]
					if h.Leaf(s, uint64(j+n-1)) != tr.Node(j+n-1) {
						return false
					}
					lh := h.NewLeaf(uint64(j+n-1), l)
					c := min(cut, len(s))
					lh.Write(s[:c])
					lh.Write(s[c:])
					if lh.Sum() != tr.Node(j+n-1) {
						return false
					}
				}
				for i := n - 2; i >= 0; i-- {
					if h.Inner(tr.Node(2*i+1), tr.Node(2*i+2), uint64(i)) != tr.Node(i) {
						return false
					}
				}
				return true
			},
			gen.SliceOfN(3000, gen.UInt8()).Map(func(b []uint8) []byte { return b }),
			gen.IntRange(1, 700),
			gen.IntRange(0, 700),
		))
	}
	props.TestingRun(t)
}
