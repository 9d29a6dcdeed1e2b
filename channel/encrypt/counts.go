package encrypt

import (
	"fmt"
	"math/bits"
)

// Counts are the paper's six metrics (Section IV-A) on the critical path
// of one all-gather: communication rounds and bytes (r_c, s_c),
// encryption rounds and bytes (r_e, s_e), decryption rounds and bytes
// (r_d, s_d). Bytes are the plaintext's, as the paper counts them (a
// ciphertext's 16-byte tag and the frame header are left out). Time is
// the Model's prediction along the same path, in seconds (0 without a
// model).
//
// They are counted as the all-gather runs: every frame carries its
// sender's counts, a receiver takes the larger of each metric (its own,
// the sender's) before adding the step's, and ranks of one node take the
// larger of theirs when they meet in shared memory. So each metric is the
// longest chain of operations that ends at that rank, and the largest
// over ranks is the paper's figure. A step of one rank is one round
// however many messages it sends and receives; its bytes are the larger
// of what it sends and what it receives. Messages and copies through a
// node's shared memory (HS1, HS2) are free, as the paper counts them.
type Counts struct {
	Rc, Sc, Re, Se, Rd, Sd int64
	Time                   float64
}

func (c Counts) words() [7]uint64 {
	return [7]uint64{uint64(c.Rc), uint64(c.Sc), uint64(c.Re), uint64(c.Se), uint64(c.Rd), uint64(c.Sd), f64bits(c.Time)}
}

func countsOf(w [7]uint64) Counts {
	return Counts{int64(w[0]), int64(w[1]), int64(w[2]), int64(w[3]), int64(w[4]), int64(w[5]), f64from(w[6])}
}

// Max returns the larger of each metric of c and d.
func (c Counts) Max(d Counts) Counts {
	return Counts{max(c.Rc, d.Rc), max(c.Sc, d.Sc), max(c.Re, d.Re), max(c.Se, d.Se), max(c.Rd, d.Rd), max(c.Sd, d.Sd), max(c.Time, d.Time)}
}

// Metrics returns the six metrics without the time, to compare.
func (c Counts) Metrics() [6]int64 { return [6]int64{c.Rc, c.Sc, c.Re, c.Se, c.Rd, c.Sd} }

func (c Counts) String() string {
	return fmt.Sprintf("r_c=%d s_c=%d r_e=%d s_e=%d r_d=%d s_d=%d", c.Rc, c.Sc, c.Re, c.Se, c.Rd, c.Sd)
}

// MetricNames are the paper's names of Metrics' entries.
var MetricNames = [6]string{"r_c", "s_c", "r_e", "s_e", "r_d", "s_d"}

// lg is ⌈log2 n⌉ (0 for n ≤ 1).
func lg(n int) int64 {
	if n <= 1 {
		return 0
	}
	return int64(bits.Len(uint(n - 1)))
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// LowerBound is Table I: no encrypted all-gather of m-byte blocks on p
// ranks over N ≥ 2 nodes of ℓ ranks does better on any metric.
// (r_d ≥ ⌈lg N / lg(ℓ+1)⌉ is computed exactly, as the least r with
// (ℓ+1)^r ≥ N, the form the paper proves it in.)
func LowerBound(p, n, l, m int) Counts {
	var rd int64
	for t := 1; t < n; t *= l + 1 {
		rd++
	}
	return Counts{Rc: lg(p), Sc: int64(p-1) * int64(m), Re: 1, Se: int64(m), Rd: rd, Sd: int64(n-1) * int64(m)}
}

// TableII is the paper's Table II: the counts of each algorithm for p
// and N powers of two, ℓ = p/N ≥ 2, block mapping, m-byte blocks.
// Two cells of the printed table disagree with the paper's own text and
// with Table I, and the text is followed: O-RD decrypts one ciphertext of
// ℓm bytes from each other node, so r_d = N-1 (the table prints p-ℓ,
// which with s_d = (p-ℓ)m would make each ciphertext m bytes); O-RD2 has
// O-RD's r_c = lg p ("the other terms are the same as O-RD"; the table
// prints lg N, below Table I's lower bound lg p). HS1's r_d and s_d are
// the text's ⌈(N-1)/ℓ⌉ and ⌈(N-1)/ℓ⌉·ℓm, which the table simplifies to
// ⌈N/ℓ⌉ and max{N, ℓ}·m (equal for powers of two, ℓ ≥ 2).
func TableII(a Algorithm, p, n, m int) Counts {
	l := p / n
	P, N, L, M := int64(p), int64(n), int64(l), int64(m)
	lgp, lgn := lg(p), lg(n)
	switch a {
	case Naive:
		return Counts{Rc: lgp, Sc: (P - 1) * M, Re: 1, Se: M, Rd: P - 1, Sd: (P - 1) * M}
	case ORing:
		return Counts{Rc: P - 1, Sc: (P - 1) * M, Re: P - 1, Se: (P - 1) * M, Rd: P - 1, Sd: (P - 1) * M}
	case ORD:
		return Counts{Rc: lgp, Sc: (P - 1) * M, Re: 1, Se: L * M, Rd: N - 1, Sd: (P - L) * M}
	case ORD2:
		return Counts{Rc: lgp, Sc: (P - 1) * M, Re: lgn, Se: (P - L) * M, Rd: lgn, Sd: (P - L) * M}
	case CRing:
		return Counts{Rc: N + L - 2, Sc: (P - 1) * M, Re: 1, Se: M, Rd: N - 1, Sd: (N - 1) * M}
	case CRD:
		return Counts{Rc: lgp, Sc: (P - 1) * M, Re: 1, Se: M, Rd: N - 1, Sd: (N - 1) * M}
	case HS1:
		rd := ceilDiv(N-1, L)
		return Counts{Rc: lgn, Sc: (P - L) * M, Re: 1, Se: L * M, Rd: rd, Sd: rd * L * M}
	case HS2:
		return Counts{Rc: lgn, Sc: (P - L) * M, Re: 1, Se: M, Rd: N - 1, Sd: (N - 1) * M}
	}
	panic(fmt.Sprintf("encrypt: TableII of %v", a))
}
