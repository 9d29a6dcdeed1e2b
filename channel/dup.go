package channel

import (
	"context"
	"fmt"
)

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
// duplicate wait for it. Dup needs a Comm of this package (an Endpoint or
// a layer over one): it panics otherwise, a programming error.
func Dup(c Comm) Comm {
	eo, ok := c.(engineOf)
	if !ok {
		panic(fmt.Sprintf("channel: Dup needs a Comm of this package, not %T", c))
	}
	e := eo.engine()
	id := e.nextCtx.Add(1)
	if l, ok := c.(*layer); ok {
		e.register(id, l.p)
		return &layer{e: e, ctx: id, p: l.p}
	}
	e.register(id, nil)
	return &dup{e: e, ctx: id}
}

// dup is an unprotected context of an engine (Dup of an Endpoint).
type dup struct {
	e   *engine
	ctx uint32
	sys bool // a view for the package's protocols (reserved tags allowed)
}

func (d *dup) reserved() Comm { return &dup{e: d.e, ctx: d.ctx, sys: true} }

func (d *dup) engine() *engine { return d.e }
func (d *dup) Rank() int       { return d.e.rank }
func (d *dup) Size() int       { return d.e.size }

// Stats returns the counters of the endpoint under the duplicate.
func (d *dup) Stats() Stats { return d.e.statsNow() }

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
