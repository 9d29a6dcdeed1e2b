package sig

import "fmt"

// Description says in words what an algebra costs and guarantees, and
// which runs it forgets: what sigcheck sig -list prints.
type Description struct {
	Algebra   string
	Bits      int
	Cost      string // of Concat / Repeat, in the counts
	Guarantee string
	// VanishingRun is a run length n such that k·n copies of any one basic
	// type have the same signature as k·n copies of any other, for every
	// k ≥ 1: a whole run's type is forgotten. 0 when there is none below
	// 2^63 elements. For gfd it is the shortest; for the others, one found.
	VanishingRun uint64
}

// Describe describes alg.
func Describe(alg Algebra) Description {
	d := Description{Algebra: alg.String(), Bits: alg.Bits()}
	switch a := alg.(type) {
	case gfd64:
		d.Cost = "O(1) / O(1)"
		d.Guarantee = fmt.Sprintf("one type for another at one element, over a run, or at a member of every copy, up to 2^63 elements; "+
			"any 2 substituted elements in signatures of at most %d elements", twoSubstitutionDistance)
	case *gfd:
		d.Cost = "O(1) / O(1)"
		d.Guarantee = fmt.Sprintf("any %d substituted element%s in signatures of at most %d elements", a.m, plural(a.m), a.order)
		d.VanishingRun = a.order // proof at gfd: α^n = 1 first at n = 2^w-1
	case *crcAlg:
		d.Cost = "O(log n) / O(log n)"
		// The basic types' low bytes are distinct, so one substituted
		// element is an error burst of at most 8 ≤ w bits, which a CRC
		// always detects.
		d.Guarantee = fmt.Sprintf("any one substituted element at any length (CRC-%d of the code bytes: bursts ≤ %d bits)", a.w, a.w)
		d.VanishingRun = a.vanish
	case *bs1:
		d.Cost = "O(1) / O(log w)"
		d.Guarantee = "none (kept to compare: Gropp's xor-bs1, the paper's mmm-bs1)"
		switch {
		case a.xor:
			d.VanishingRun = 2 * uint64(a.w) // rotations repeat after w, pairs cancel
		case a.m == 1:
			d.VanishingRun = uint64(a.w) // x·(2^w-1) ≡ 0 modulo 2^w-1
		default:
			d.VanishingRun = uint64(a.w) * (1<<a.w - 1)
		}
	}
	return d
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// elements returns "1 element", "2 elements".
func elements(n uint64) string {
	if n == 1 {
		return "1 element"
	}
	return fmt.Sprintf("%d elements", n)
}
