package channel

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
// its view (Dup, and the protection layers).
func (e *engine) dup(p *protection) Comm {
	id := e.nextCtx.Add(1)
	e.register(id, p)
	return &view{e: e, ctx: id, p: p}
}
