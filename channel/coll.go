package channel

import (
	"context"
	"errors"
	"fmt"
)

// Collectives: every rank of the Comm calls the same ones in the same
// order, as in MPI. They run on any Comm through its Send and Recv, on
// reserved tags, so a user's AnyTag receive never takes their messages. A
// Comm that can do better (a protection layer checking each block against
// its owner's root) implements Bcaster or Allgatherer, and is used instead.

// Reserved tags of the collectives.
const (
	tagBarrier = ReservedTag + 1 + iota
	tagBcast
	tagGather
	tagAllgather
)

// ErrCollective: the ranks disagree on a collective's arguments (root, sizes).
var ErrCollective = errors.New("channel: ranks disagree on a collective")

// Bcaster is a Comm with its own broadcast.
type Bcaster interface {
	Bcast(ctx context.Context, root int, buf []byte) error
}

// Allgatherer is a Comm with its own all-gather.
type Allgatherer interface {
	Allgather(ctx context.Context, send, recv []byte) error
}

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
	p, r := c.Size(), c.Rank()
	for k := 1; k < p; k <<= 1 {
		if err := c.Send(ctx, (r+k)%p, tagBarrier, nil); err != nil {
			return err
		}
		if _, err := c.Recv(ctx, (r-k+p)%p, tagBarrier, nil); err != nil {
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
	p, r := c.Size(), c.Rank()
	rel := (r - root + p) % p
	mask := 1
	for ; mask < p; mask <<= 1 {
		if rel&mask != 0 {
			if err := recvExact(ctx, c, (r-mask+p)%p, tagBcast, buf); err != nil {
				return err
			}
			if corruptHook != nil {
				corruptHook(c, buf)
			}
			break
		}
	}
	// A send that fails (a child whose buffer is too short discards the
	// message) does not stop the others: their subtrees get the data.
	var first error
	for mask >>= 1; mask > 0; mask >>= 1 {
		if rel+mask < p {
			if err := c.Send(ctx, (r+mask)%p, tagBcast, buf); err != nil && first == nil {
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
	if err := checkRank(c, root, "root"); err != nil {
		return err
	}
	p, r, n := c.Size(), c.Rank(), len(send)
	if r != root {
		return c.Send(ctx, root, tagGather, send)
	}
	if len(recv) != p*n {
		return fmt.Errorf("%w: a receive buffer of %d bytes for %d ranks of %d", ErrCollective, len(recv), p, n)
	}
	copy(recv[r*n:], send)
	reqs := make([]*Request, 0, p-1)
	for i := range p {
		if i != r {
			reqs = append(reqs, irecvExact(ctx, c, i, tagGather, recv[i*n:(i+1)*n]))
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
	if err := checkAllgather(c, send, recv); err != nil {
		return err
	}
	if len(recv) <= bruckMax {
		return BruckAllgather(ctx, c, send, recv)
	}
	return RingAllgather(ctx, c, send, recv)
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
	p, r, n := c.Size(), c.Rank(), len(send)
	if len(recv) != p*n {
		return fmt.Errorf("%w: a receive buffer of %d bytes for %d ranks of %d", ErrCollective, len(recv), p, n)
	}
	copy(recv[r*n:], send)
	right, left := (r+1)%p, (r-1+p)%p
	for s := range p - 1 {
		out := (r - s + p) % p
		in := (r - s - 1 + p) % p
		if err := sendRecv(ctx, c, right, recv[out*n:(out+1)*n], left, recv[in*n:(in+1)*n], tagAllgather); err != nil {
			return err
		}
		if corruptHook != nil {
			corruptHook(c, recv[in*n:(in+1)*n])
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
	p, r, n := c.Size(), c.Rank(), len(send)
	if len(recv) != p*n {
		return fmt.Errorf("%w: a receive buffer of %d bytes for %d ranks of %d", ErrCollective, len(recv), p, n)
	}
	tmp := make([]byte, p*n)
	copy(tmp, send)
	for k := 1; k < p; k <<= 1 {
		cnt := min(k, p-k)
		if err := sendRecv(ctx, c, (r-k+p)%p, tmp[:cnt*n], (r+k)%p, tmp[k*n:(k+cnt)*n], tagAllgather); err != nil {
			return err
		}
		if corruptHook != nil {
			corruptHook(c, tmp[k*n:(k+cnt)*n])
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
