package tree

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/klauspost/reedsolomon"

	"github.com/sigcheck/sigcheck/csum"
)

// Parity is Reed–Solomon parity over the segments of a buffer, from
// github.com/klauspost/reedsolomon: with P parity segments per stripe, the
// segments a tree locates as corrupted are rebuilt in place, with no
// retransmission, as long as no stripe holds more than P of them.
//
// A stripe is up to 256-P consecutive segments (the data shards of one
// GF(2^8) code; a buffer that small is one stripe, so its P parity
// segments repair any P corrupted segments). Stripes keep every code small
// enough to live in cache and let files be encoded as they stream past;
// the cost is P segments of parity per stripe, P/(256-P) of the data
// (1.6 % for P = 4). Data segments are used in place, only the short last
// one is padded into a copy.
type Parity struct {
	P       int   // parity segments per stripe
	Stripe  int   // data segments per stripe (the last stripe may have fewer)
	Segment int   // bytes per segment
	Size    int64 // bytes of data
	// Shards holds the parity segments, stripe by stripe: P per stripe.
	Shards [][]byte
}

// MaxParity bounds the parity segments per stripe.
const MaxParity = 128

// Errors of parity repair.
var (
	ErrTooManyFaults = errors.New("tree: more corrupted segments than the parity can rebuild")
	ErrRepairCheck   = errors.New("tree: a rebuilt segment does not hash as the sender's")
)

// NewParity computes p parity segments per stripe over data cut into
// segments of segment bytes.
func NewParity(data []byte, segment, p int) (*Parity, error) {
	par, err := newParityLayout(int64(len(data)), segment, p)
	if err != nil {
		return nil, err
	}
	for s := range par.Stripes() {
		shards, err := par.encodeStripe(par.stripeData(data, s))
		if err != nil {
			return nil, err
		}
		par.Shards = append(par.Shards, shards...)
	}
	return par, nil
}

// ParityLayout returns the layout of p parity segments per stripe over
// size bytes in segments of segment bytes, without shards: for a receiver
// that gets the shards one by one (it fills Shards, P per stripe, in
// stripe order).
func ParityLayout(size int64, segment, p int) (*Parity, error) {
	return newParityLayout(size, segment, p)
}

// EncodeStripe returns the P parity segments of stripe s of data (the
// whole buffer), for a sender that streams its parity out stripe by stripe.
func (par *Parity) EncodeStripe(data []byte, s int) ([][]byte, error) {
	if int64(len(data)) != par.Size || s < 0 || s >= par.Stripes() {
		return nil, fmt.Errorf("%w: stripe %d of %d over %d bytes of data (the layout is for %d)", ErrShape, s, par.Stripes(), len(data), par.Size)
	}
	return par.encodeStripe(par.stripeData(data, s))
}

func newParityLayout(size int64, segment, p int) (*Parity, error) {
	if segment <= 0 {
		return nil, fmt.Errorf("%w %d: must be positive", ErrSegment, segment)
	}
	if p < 1 || p > MaxParity {
		return nil, fmt.Errorf("tree: %d parity segments per stripe: want 1 to %d", p, MaxParity)
	}
	n := max(1, (size+int64(segment)-1)/int64(segment))
	return &Parity{P: p, Stripe: int(min(n, int64(256-p))), Segment: segment, Size: size}, nil
}

// segments returns the number of data segments.
func (par *Parity) segments() int64 {
	return max(1, (par.Size+int64(par.Segment)-1)/int64(par.Segment))
}

// Stripes returns the number of stripes.
func (par *Parity) Stripes() int {
	return int((par.segments() + int64(par.Stripe) - 1) / int64(par.Stripe))
}

// stripeSegments returns the first segment of stripe s and its count.
func (par *Parity) stripeSegments(s int) (first, count int) {
	first = s * par.Stripe
	return first, int(min(int64(par.Stripe), par.segments()-int64(first)))
}

// stripeData returns the data shards of stripe s: the segments themselves,
// the last one padded with zeros into a copy if it is short.
func (par *Parity) stripeData(data []byte, s int) [][]byte {
	first, count := par.stripeSegments(s)
	shards := make([][]byte, count)
	for k := range shards {
		off := int64(first+k) * int64(par.Segment)
		end := min(off+int64(par.Segment), int64(len(data)))
		shards[k] = data[off:end]
		if end-off < int64(par.Segment) {
			shards[k] = append(make([]byte, 0, par.Segment), data[off:end]...)[:par.Segment]
		}
	}
	return shards
}

var encoders sync.Map // [2]int{data, parity} → reedsolomon.Encoder

func encoder(data, parity int) (reedsolomon.Encoder, error) {
	key := [2]int{data, parity}
	if e, ok := encoders.Load(key); ok {
		return e.(reedsolomon.Encoder), nil
	}
	// A Cauchy matrix costs O(data·parity) to build; the default Vandermonde
	// one needs a Gaussian elimination of the whole matrix (tens of ms at 252).
	e, err := reedsolomon.New(data, parity, reedsolomon.WithCauchyMatrix())
	if err != nil {
		return nil, fmt.Errorf("tree: parity code of %d+%d shards: %w", data, parity, err)
	}
	e2, _ := encoders.LoadOrStore(key, e)
	return e2.(reedsolomon.Encoder), nil
}

// rebuild reconstructs, in shards (count data shards then the parity),
// the data shards of segments segs of stripe s, whose first segment is
// first.
func rebuild(shards [][]byte, count int, segs []int, first, s int) error {
	for _, j := range segs {
		shards[j-first] = nil
	}
	enc, err := encoder(count, len(shards)-count)
	if err != nil {
		return err
	}
	if err := enc.ReconstructData(shards); err != nil {
		return fmt.Errorf("tree: parity of stripe %d: %w", s, err)
	}
	return nil
}

// encodeStripe returns the P parity segments of one stripe's data shards.
func (par *Parity) encodeStripe(data [][]byte) ([][]byte, error) {
	enc, err := encoder(len(data), par.P)
	if err != nil {
		return nil, err
	}
	shards := append(slices.Clone(data), make([][]byte, par.P)...)
	for k := len(data); k < len(shards); k++ {
		shards[k] = make([]byte, par.Segment)
	}
	if err := enc.Encode(shards); err != nil {
		return nil, fmt.Errorf("tree: parity: %w", err)
	}
	return shards[len(data):], nil
}

// Repair rebuilds the faulty segments of data from the parity, checks
// each rebuilt segment against want (the sender's leaf hash of that
// segment, from its tree or a Descent), writes it into data and updates
// the receiver's tree t. Nothing is written unless every rebuilt segment
// checks: ErrTooManyFaults when a stripe has more faulty segments than P,
// ErrRepairCheck when a rebuilt segment does not hash as wanted (the
// parity itself was corrupted, or more segments are bad than were found).
func (par *Parity) Repair(data []byte, t *Tree, faulty []int, want func(segment int) (csum.Value, bool)) error {
	if int64(len(data)) != par.Size || t.Size() != par.Size || t.SegmentSize() != par.Segment {
		return fmt.Errorf("%w: parity for %d bytes in %d-byte segments, data of %d, tree of %d in %d-byte segments",
			ErrShape, par.Size, par.Segment, len(data), t.Size(), t.SegmentSize())
	}
	if len(par.Shards) != par.Stripes()*par.P {
		return fmt.Errorf("%w: %d parity segments for %d stripes of %d", ErrShape, len(par.Shards), par.Stripes(), par.P)
	}
	byStripe := map[int][]int{}
	for _, j := range faulty {
		if j < 0 || int64(j) >= par.segments() {
			return fmt.Errorf("%w: segment %d of %d", ErrIndex, j, par.segments())
		}
		s := j / par.Stripe
		if !slices.Contains(byStripe[s], j) {
			byStripe[s] = append(byStripe[s], j)
		}
	}
	type fix struct {
		segment int
		content []byte
	}
	var fixes []fix
	for s, segs := range byStripe {
		if len(segs) > par.P {
			return fmt.Errorf("%w: %d in stripe %d, parity rebuilds %d", ErrTooManyFaults, len(segs), s, par.P)
		}
		first, count := par.stripeSegments(s)
		shards := append(par.stripeData(data, s), make([][]byte, par.P)...)
		for k := range par.P {
			shards[count+k] = slices.Clone(par.Shards[s*par.P+k])
		}
		if err := rebuild(shards, count, segs, first, s); err != nil {
			return err
		}
		for _, j := range segs {
			_, n := t.SegmentRange(j)
			content := shards[j-first][:n]
			expected, ok := want(j)
			if !ok {
				return fmt.Errorf("%w: no hash to check segment %d against", ErrRepairCheck, j)
			}
			got := make([]uint64, t.h.words)
			t.h.leaf(content, uint64(t.Leaf(j)), got)
			if get(got) != expected {
				return fmt.Errorf("%w: segment %d", ErrRepairCheck, j)
			}
			fixes = append(fixes, fix{j, content})
		}
	}
	for _, f := range fixes {
		off, _ := t.SegmentRange(f.segment)
		copy(data[off:], f.content)
		if err := t.Update(data, f.segment); err != nil {
			return err
		}
	}
	return nil
}

// The wire form of parity: version, kind 6, then P, stripe width, segment
// size and data size as uvarints, then the parity segments back to back
// (their number and size follow from the header).
const kindParity kind = 6

// AppendBinary appends the wire form of the parity.
func (par *Parity) AppendBinary(b []byte) []byte {
	b = append(b, wireVersion, byte(kindParity), 0)
	for _, v := range []uint64{uint64(par.P), uint64(par.Stripe), uint64(par.Segment), uint64(par.Size)} {
		b = binary.AppendUvarint(b, v)
	}
	for _, s := range par.Shards {
		b = append(b, s...)
	}
	return b
}

// DecodeParity decodes parity; its layout must be the one NewParity would
// choose for its size, and its length must be exactly that of its shards.
// The shards share b's memory.
func DecodeParity(b []byte) (*Parity, error) {
	if len(b) < 3 || b[0] != wireVersion || kind(b[1]) != kindParity || b[2] != 0 {
		return nil, fmt.Errorf("%w: parity: bad header", ErrWire)
	}
	r := &reader{b: b[3:], k: kindParity}
	p := r.uvarint("parity", MaxParity)
	stripe := r.uvarint("stripe", 255)
	seg := r.uvarint("segment", 1<<40)
	size := r.uvarint("size", 1<<62)
	if r.err != nil {
		return nil, r.err
	}
	par, err := newParityLayout(int64(size), int(seg), int(p))
	if err != nil {
		return nil, fmt.Errorf("%w: parity: %v", ErrWire, err)
	}
	if par.Stripe != int(stripe) {
		return nil, fmt.Errorf("%w: parity: stripe of %d segments, the layout has %d", ErrWire, stripe, par.Stripe)
	}
	want := uint64(par.Stripes()) * p * seg
	if uint64(len(r.b)) != want {
		return nil, fmt.Errorf("%w: parity: %d bytes of shards, want %d", ErrWire, len(r.b), want)
	}
	for k := range par.Stripes() * par.P {
		par.Shards = append(par.Shards, r.b[k*par.Segment:(k+1)*par.Segment:(k+1)*par.Segment])
	}
	return par, nil
}
