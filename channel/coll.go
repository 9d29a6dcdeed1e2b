package channel

import (
	"context"
	"errors"
	"fmt"

	"github.com/sigcheck/sigcheck/channel/transport"
)

// Collectives: every rank of the Comm calls the same ones in the same
// order, as in MPI. They run on any Comm through its Send and Recv, on
// reserved tags, so a user's AnyTag receive never takes their messages. A
// Comm that can do better (a protection layer checking each block against
// its owner's root) implements Bcaster or Allgatherer, and is used instead.

// Collectives are numbered. Every call of one on a Comm over this
// package's engine takes the next number of that Comm's sequence (every rank makes the same
// calls in the same order, so the numbers agree, whatever each call
// returns), and its messages carry the number in their tags. A message
// left over from a call that failed on some ranks (sent after its
// receiver gave up on it) then waits unmatched, rather than being taken
// by the next call of the same collective, which would return success
// with another call's bytes; the next call on the Comm drops it (once it
// has come whole), so that it holds no memory for long.
//
// The number wraps after 2^20 calls; a message of a call 2^19 calls old
// or older (never left waiting that long) counts as new. A Comm from
// elsewhere (a wrapper of another package, or a protection layer over
// one) has no sequence: its calls all use number 0, and a left-over
// message can be taken by a later call, as in MPI, where a communicator
// on which a collective failed is not to be used again.
const (
	collTagBase = ReservedTag + 1<<16
	collSeqBits = 20
	collKinds   = 16 // tags per call
)

// The kinds of a call's messages.
const (
	kindBarrier = 1 + iota
	kindBcast
	kindGather
	kindAllgather
	kindE2EFlag   // a rank's verdict to the root of a broadcast
	kindE2ERepair // a block resent by its owner
	kindE2ERoot   // an owner's root, resent with its block
)

// collTag is the tag of the messages of one kind in call seq.
func collTag(seq uint32, kind int) int {
	return collTagBase + int(seq&(1<<collSeqBits-1))*collKinds + kind
}

// collSeq splits a reserved tag into its call number and kind, if it is a
// collective's.
func collSeq(tag int64) (seq uint32, kind int, ok bool) {
	if tag < collTagBase || tag >= collTagBase+collKinds<<collSeqBits {
		return 0, 0, false
	}
	t := tag - collTagBase
	return uint32(t / collKinds), int(t % collKinds), true
}

// sequencer is a Comm whose collectives are numbered (this package's).
type sequencer interface {
	nextColl() uint32
}

// nextColl gives c's next call its number: the first thing every
// collective does, before it checks its arguments, so that a call that
// fails takes its number on every rank.
func nextColl(c Comm) uint32 {
	if s, ok := c.(sequencer); ok {
		return s.nextColl()
	}
	return 0
}

// ErrCollective: the ranks disagree on a collective's arguments (root, sizes).
var ErrCollective = errors.New("channel: ranks disagree on a collective")

// Bcaster is a Comm (or a Transport) with its own broadcast
// (transport.Bcaster).
type Bcaster = transport.Bcaster

// Allgatherer is a Comm (or a Transport) with its own all-gather
// (transport.Allgatherer).
type Allgatherer = transport.Allgatherer

// Barrier returns when every rank has entered it: the Comm's own barrier
// if it has one (Barrierer), else DisseminationBarrier.
func Barrier(ctx context.Context, c Comm) error {
	if b, ok := c.(Barrierer); ok {
		return b.Barrier(ctx)
	}
	return DisseminationBarrier(ctx, c)
}

// DisseminationBarrier is Barrier over Send and Recv: ⌈log2 p⌉ rounds of
// empty messages.
func DisseminationBarrier(ctx context.Context, c Comm) error {
	c = sys(c)
	tag := collTag(nextColl(c), kindBarrier)
	p, r := c.Size(), c.Rank()
	for k := 1; k < p; k <<= 1 {
		if err := c.Send(ctx, (r+k)%p, tag, nil); err != nil {
			return err
		}
		if _, err := c.Recv(ctx, (r-k+p)%p, tag, nil); err != nil {
			return err
		}
	}
	return nil
}

// Bcast copies root's buf into every other rank's buf (of the same
// length) along a binomial tree: ⌈log2 p⌉ rounds.
func Bcast(ctx context.Context, c Comm, root int, buf []byte) error {
	if err := checkRank(c, root, "root"); err != nil {
		return err
	}
	if b, ok := c.(Bcaster); ok {
		return b.Bcast(ctx, root, buf)
	}
	return BinomialBcast(ctx, c, root, buf)
}

// BinomialBcast is Bcast over Send and Recv, whatever c implements:
// what a Bcaster can build on.
func BinomialBcast(ctx context.Context, c Comm, root int, buf []byte) error {
	c = sys(c)
	return binomialBcast(ctx, c, nextColl(c), root, buf)
}

// binomialBcast is BinomialBcast as part of call seq, on c's reserved view.
func binomialBcast(ctx context.Context, c Comm, seq uint32, root int, buf []byte) error {
	if err := checkRank(c, root, "root"); err != nil {
		return err
	}
	tag := collTag(seq, kindBcast)
	p, r := c.Size(), c.Rank()
	rel := (r - root + p) % p
	mask := 1
	for ; mask < p; mask <<= 1 {
		if rel&mask != 0 {
			if err := recvExact(ctx, c, (r-mask+p)%p, tag, buf); err != nil {
				return err
			}
			if testHookCorrupt != nil {
				testHookCorrupt(c, buf)
			}
			break
		}
	}
	// A send that fails (a child whose buffer is too short discards the
	// message) does not stop the others: their subtrees get the data.
	var first error
	for mask >>= 1; mask > 0; mask >>= 1 {
		if rel+mask < p {
			if err := c.Send(ctx, (r+mask)%p, tag, buf); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// recvExact receives a message that must fill buf exactly.
func recvExact(ctx context.Context, c Comm, src, tag int, buf []byte) error {
	st, err := c.Recv(ctx, src, tag, buf)
	if err != nil {
		if errors.Is(err, ErrTruncated) {
			return fmt.Errorf("%w: %v", ErrCollective, err)
		}
		return err
	}
	if st.Len != len(buf) {
		return fmt.Errorf("%w: %d bytes from rank %d, %d expected", ErrCollective, st.Len, src, len(buf))
	}
	return nil
}

// Gather collects every rank's send (all of the same length n) into
// root's recv, rank i's at recv[i·n:], which must hold Size()·n bytes;
// recv is ignored elsewhere.
func Gather(ctx context.Context, c Comm, root int, send, recv []byte) error {
	c = sys(c)
	tag := collTag(nextColl(c), kindGather)
	if err := checkRank(c, root, "root"); err != nil {
		return err
	}
	p, r, n := c.Size(), c.Rank(), len(send)
	if r != root {
		return c.Send(ctx, root, tag, send)
	}
	if len(recv) != p*n {
		return fmt.Errorf("%w: a receive buffer of %d bytes for %d ranks of %d", ErrCollective, len(recv), p, n)
	}
	copy(recv[r*n:], send)
	reqs := make([]*Request, 0, p-1)
	for i := range p {
		if i != r {
			reqs = append(reqs, irecvExact(ctx, c, i, tag, recv[i*n:(i+1)*n]))
		}
	}
	return WaitAll(reqs...)
}

func irecvExact(ctx context.Context, c Comm, src, tag int, buf []byte) *Request {
	req := &Request{done: make(chan struct{})}
	go func() {
		defer close(req.done)
		req.err = recvExact(ctx, c, src, tag, buf)
	}()
	return req
}

// bruckMax is the total size below which Allgather takes ⌈log2 p⌉ rounds
// (Bruck's recursive doubling, any p) rather than the p-1 rounds of the
// ring, whose every round moves one block and so uses the links better
// for large blocks.
const bruckMax = 256 << 10

// Allgather gives every rank every rank's send (all of length n) in recv,
// rank i's at recv[i·n:], which must hold Size()·n bytes.
func Allgather(ctx context.Context, c Comm, send, recv []byte) error {
	if a, ok := c.(Allgatherer); ok {
		return a.Allgather(ctx, send, recv)
	}
	return allgather(ctx, c, send, recv)
}

// allgather is Allgather over Send and Recv: Bruck's for small totals,
// the ring for large ones.
func allgather(ctx context.Context, c Comm, send, recv []byte) error {
	c = sys(c)
	seq := nextColl(c)
	if len(recv) <= bruckMax {
		return bruckAllgather(ctx, c, seq, send, recv)
	}
	return ringAllgather(ctx, c, seq, send, recv)
}

func checkAllgather(c Comm, send, recv []byte) error {
	if len(recv) != c.Size()*len(send) {
		return fmt.Errorf("%w: a receive buffer of %d bytes for %d ranks of %d", ErrCollective, len(recv), c.Size(), len(send))
	}
	return nil
}

// RingAllgather is Allgather in p-1 rounds: in round s each rank passes
// the block it got in round s-1 (its own first) to its right neighbour.
func RingAllgather(ctx context.Context, c Comm, send, recv []byte) error {
	c = sys(c)
	return ringAllgather(ctx, c, nextColl(c), send, recv)
}

// ringAllgather is RingAllgather as part of call seq, on c's reserved view.
func ringAllgather(ctx context.Context, c Comm, seq uint32, send, recv []byte) error {
	if err := checkAllgather(c, send, recv); err != nil {
		return err
	}
	tag := collTag(seq, kindAllgather)
	p, r, n := c.Size(), c.Rank(), len(send)
	copy(recv[r*n:], send)
	right, left := (r+1)%p, (r-1+p)%p
	for s := range p - 1 {
		out := (r - s + p) % p
		in := (r - s - 1 + p) % p
		if err := sendRecv(ctx, c, right, recv[out*n:(out+1)*n], left, recv[in*n:(in+1)*n], tag); err != nil {
			return err
		}
		if testHookCorrupt != nil {
			testHookCorrupt(c, recv[in*n:(in+1)*n])
		}
	}
	return nil
}

// BruckAllgather is Allgather in ⌈log2 p⌉ rounds, for any p: in the round
// of distance k each rank sends the min(k, p-k) blocks it holds to rank
// r-k and appends those of rank r+k; a final rotation puts the blocks in
// rank order.
func BruckAllgather(ctx context.Context, c Comm, send, recv []byte) error {
	c = sys(c)
	return bruckAllgather(ctx, c, nextColl(c), send, recv)
}

// bruckAllgather is BruckAllgather as part of call seq, on c's reserved
// view.
func bruckAllgather(ctx context.Context, c Comm, seq uint32, send, recv []byte) error {
	if err := checkAllgather(c, send, recv); err != nil {
		return err
	}
	tag := collTag(seq, kindAllgather)
	p, r, n := c.Size(), c.Rank(), len(send)
	tmp := make([]byte, p*n)
	copy(tmp, send)
	for k := 1; k < p; k <<= 1 {
		cnt := min(k, p-k)
		if err := sendRecv(ctx, c, (r-k+p)%p, tmp[:cnt*n], (r+k)%p, tmp[k*n:(k+cnt)*n], tag); err != nil {
			return err
		}
		if testHookCorrupt != nil {
			testHookCorrupt(c, tmp[k*n:(k+cnt)*n])
		}
	}
	for i := range p {
		copy(recv[((r+i)%p)*n:], tmp[i*n:(i+1)*n])
	}
	return nil
}

// sendRecv sends to dst and receives from src at once, the receive
// posted first so that the message lands straight in its buffer.
func sendRecv(ctx context.Context, c Comm, dst int, out []byte, src int, in []byte, tag int) error {
	rr := irecvExact(ctx, c, src, tag, in)
	serr := c.Send(ctx, dst, tag, out)
	_, rerr := rr.Wait()
	if serr != nil {
		return serr
	}
	return rerr
}
