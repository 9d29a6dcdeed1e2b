package channel

import (
	"context"
	"sync"
)

// The contexts of receives nobody waits for yet. An Irecv is waited for
// by its first Wait (Request.run), so no goroutine watches its context
// until then; yet a receive whose context ends must be withdrawn, waited
// for or not, or a later message meant for another receive would land in
// it. A context.AfterFunc per receive did that at a third of a small
// message's cost (osu bw at 1 B over Open MPI), so the receives posted
// under one context share one: the engine keeps a watch of the context
// its last lazy receive was posted under, with the receives under it,
// and when that context ends, starts the wait of each (Request.Done),
// which withdraws those whose message has not come.
type ctxWatch struct {
	ctx  context.Context
	mu   sync.Mutex
	reqs []*Request // posted under ctx, waited for or not; pruned as they pile up
	over bool       // ctx has ended: a receive added now is started at once
}

// watchCtx makes sure that r, a lazy receive posted under ctx, has its
// wait started when ctx ends.
func (e *engine) watchCtx(ctx context.Context, r *Request) {
	if ctx.Done() == nil {
		return // never ends
	}
	w := e.watch.Load()
	if w == nil || w.ctx != ctx {
		w = &ctxWatch{ctx: ctx}
		context.AfterFunc(ctx, w.fire)
		e.watch.Store(w) // a receive racing with it under the old watch keeps that one
	}
	w.mu.Lock()
	if w.over {
		w.mu.Unlock()
		r.Done()
		return
	}
	if len(w.reqs) == cap(w.reqs) && len(w.reqs) >= 64 {
		// Drop the receives already waited for, before the slice grows.
		kept := w.reqs[:0]
		for _, q := range w.reqs {
			if !q.started.Load() {
				kept = append(kept, q)
			}
		}
		clear(w.reqs[len(kept):])
		w.reqs = kept
	}
	w.reqs = append(w.reqs, r)
	w.mu.Unlock()
}

// fire starts the wait of every receive under the watch's ended context.
func (w *ctxWatch) fire() {
	w.mu.Lock()
	reqs := w.reqs
	w.reqs, w.over = nil, true
	w.mu.Unlock()
	for _, r := range reqs {
		r.Done()
	}
}
