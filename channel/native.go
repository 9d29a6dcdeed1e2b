package channel

import "context"

// native holds the collectives of an Endpoint's transport, if it has its
// own (MPI_Barrier, MPI_Bcast, MPI_Allgather over Open MPI). They serve
// the unprotected Endpoint only: a protection layer runs its collectives
// over its own messages, checked end to end, and an Endpoint with an
// Injector runs them over frames, so that the faults reach them.
type native struct {
	barrier   Barrierer
	bcast     Bcaster
	allgather Allgatherer
}

func nativeOf(t Transport) native {
	var n native
	n.barrier, _ = t.(Barrierer)
	n.bcast, _ = t.(Bcaster)
	n.allgather, _ = t.(Allgatherer)
	return n
}

// Barrier is the transport's barrier, or DisseminationBarrier.
func (p *Endpoint) Barrier(ctx context.Context) error {
	if p.native.barrier != nil {
		return p.native.barrier.Barrier(ctx)
	}
	return DisseminationBarrier(ctx, p)
}

// Bcast is the transport's broadcast, or BinomialBcast.
func (p *Endpoint) Bcast(ctx context.Context, root int, buf []byte) error {
	if p.native.bcast != nil {
		return p.native.bcast.Bcast(ctx, root, buf)
	}
	return BinomialBcast(ctx, p, root, buf)
}

// Allgather is the transport's all-gather, or Bruck's or the ring over
// messages.
func (p *Endpoint) Allgather(ctx context.Context, send, recv []byte) error {
	if p.native.allgather != nil {
		if err := checkAllgather(p, send, recv); err != nil {
			return err
		}
		return p.native.allgather.Allgather(ctx, send, recv)
	}
	return allgather(ctx, p, send, recv)
}
