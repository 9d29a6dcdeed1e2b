package channel

import "context"

// Duplicator is a Comm that can make duplicates of itself (Dup): every
// Comm of this package over an engine is one (an Endpoint, a duplicate, a
// layer over either). A Comm of another package can be one too: its Dup
// must give what Dup promises.
type Duplicator interface {
	Comm
	Dup() Comm
}

// Dup returns a communicator with the ranks of c and a matching space of
// its own, as MPI_Comm_dup does: a message sent on it is received only on
// it, whatever its tag, so a library built over a Comm (replication,
// encrypted collectives) can talk on the duplicate without ever taking,
// or being taken for, its user's messages. A duplicate of a protection
// layer is protected the same way; a duplicate of an Endpoint is not.
//
// As with MPI_Comm_dup, every rank calls Dup on its own c, and the ranks
// make their duplicates in the same order (contexts are numbered by
// creation on each rank); frames that reach a rank before it has made the
// duplicate wait for it.
//
// A matching space of its own cannot be made over any Comm's Send and
// Recv (a receive on it would take the messages of the Comm under it), so
// Dup takes a Duplicator: a Comm held as a Comm is tried with
// c.(channel.Duplicator). A protection layer over a Comm of another
// package is not one.
func Dup(c Duplicator) Comm { return c.Dup() }

// dup makes a new context of e, protected by p (nil: not), and returns
// it as a Comm (Dup).
func (e *engine) dup(p *protection) Comm {
	id := e.nextCtx.Add(1)
	e.register(id, p)
	if p != nil {
		return &layer{e: e, ctx: id, p: p}
	}
	return &dup{e: e, ctx: id}
}

// dup is an unprotected context of an engine (Dup of an Endpoint).
type dup struct {
	e   *engine
	ctx uint32
	sys bool // a view for the package's protocols (reserved tags allowed)
}

func (d *dup) reserved() Comm { return &dup{e: d.e, ctx: d.ctx, sys: true} }

func (d *dup) engine() *engine                { return d.e }
func (d *dup) context() (uint32, *protection) { return d.ctx, nil }
func (d *dup) Rank() int                      { return d.e.rank }
func (d *dup) Size() int                      { return d.e.size }

// Dup returns a duplicate of d (see Dup).
func (d *dup) Dup() Comm { return d.e.dup(nil) }

// Stats returns the counters of the endpoint under the duplicate.
func (d *dup) Stats() Stats { return d.e.statsNow() }

// Flush waits for the eager sends of the endpoint under the duplicate
// (see Flush).
func (d *dup) Flush(ctx context.Context) error { return d.e.flush(ctx) }

func (d *dup) Send(ctx context.Context, dst, tag int, data []byte) error {
	if err := checkSend(d, dst, tag, d.sys); err != nil {
		return err
	}
	return d.e.send(ctx, d.ctx, dst, int64(tag), data, nil)
}

func (d *dup) Recv(ctx context.Context, src, tag int, buf []byte) (Status, error) {
	if err := checkRecv(d, src, tag, d.sys); err != nil {
		return Status{}, err
	}
	return d.e.recv(ctx, d.ctx, src, int64(tag), buf)
}

func (d *dup) postSend(ctx context.Context, dst, tag int, data []byte) func() error {
	if err := checkSend(d, dst, tag, d.sys); err != nil {
		return func() error { return err }
	}
	t := d.e.ticket(dst)
	return func() error { return d.e.sendIn(ctx, t, d.ctx, dst, int64(tag), data, nil) }
}

func (d *dup) post(src, tag int, buf []byte) (*recvReq, error) {
	if err := checkRecv(d, src, tag, d.sys); err != nil {
		return nil, err
	}
	return d.e.post(d.ctx, src, int64(tag), buf)
}

func (d *dup) nextColl() uint32 { return d.e.nextColl(d.ctx) }
