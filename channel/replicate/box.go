package replicate

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sigcheck/sigcheck/channel"
)

// msgID names one message from a virtual rank (see wire.go).
type msgID struct {
	src, tag int
	seq      uint64
}

type boxKey struct {
	kind byte // 'R' or 'V'
	id   msgID
	from int // replica
}

type boxItem struct {
	rep  report
	ver  verdict
	data []byte
}

// maxBox bounds the records kept for discoveries not (or no longer)
// waiting: a report a receiver sends its neighbour that saw no mismatch
// is never asked for. The oldest go first; a discovery waits for records
// a few messages old at most.
const maxBox = 4096

// mailbox holds the discovery records the dispatcher receives until a
// receive asks for them.
type mailbox struct {
	mu      sync.Mutex
	items   map[boxKey]boxItem
	order   []boxKey
	waiting map[msgID]int // the length of a correction a discovery here waits for
	changed chan struct{} // closed and replaced at every arrival
	err     error         // the dispatcher's end
}

func newMailbox() *mailbox {
	return &mailbox{items: map[boxKey]boxItem{}, waiting: map[msgID]int{}, changed: make(chan struct{})}
}

func (b *mailbox) put(k boxKey, it boxItem) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.items[k] = it
	b.order = append(b.order, k)
	if len(b.order) > maxBox {
		delete(b.items, b.order[0])
		b.order = b.order[1:]
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *mailbox) fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.err = err
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *mailbox) expect(id msgID, n int) {
	b.mu.Lock()
	b.waiting[id] = n
	b.mu.Unlock()
}

func (b *mailbox) forget(id msgID) {
	b.mu.Lock()
	delete(b.waiting, id)
	b.mu.Unlock()
}

func (b *mailbox) expected(id msgID) (int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.waiting[id]
	return n, ok
}

// wait takes the first of keys to arrive.
func (b *mailbox) wait(ctx context.Context, keys ...boxKey) (boxItem, error) {
	for {
		b.mu.Lock()
		for _, k := range keys {
			if it, ok := b.items[k]; ok {
				delete(b.items, k)
				b.mu.Unlock()
				return it, nil
			}
		}
		if b.err != nil {
			err := b.err
			b.mu.Unlock()
			return boxItem{}, err
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return boxItem{}, ctx.Err()
		}
	}
}

func (b *mailbox) waitReport(ctx context.Context, id msgID, from ...int) (report, error) {
	keys := make([]boxKey, len(from))
	for i, f := range from {
		keys[i] = boxKey{'R', id, f}
	}
	it, err := b.wait(ctx, keys...)
	return it.rep, err
}

func (b *mailbox) waitVerdict(ctx context.Context, id msgID, from int) (verdict, []byte, error) {
	it, err := b.wait(ctx, boxKey{'V', id, from})
	return it.ver, it.data, err
}

// dispatch receives the discovery records of this virtual rank's other
// replicas until Close, and a correction's bytes right after its
// verdict: into a buffer of the length a discovery here waits for, or,
// when none waits (a stale verdict), into a small one that is dropped,
// so a peer's length never sizes an allocation.
func (c *Comm) dispatch(ctx context.Context) {
	defer close(c.done)
	var buf [maxRecord]byte
	var scratch [256]byte
	for {
		st, err := c.repair.Recv(ctx, channel.AnySource, channel.AnyTag, buf[:])
		if errors.Is(err, channel.ErrTruncated) {
			err = fmt.Errorf("%w: a discovery record of %d bytes from native rank %d", ErrWire, st.Len, st.Source)
		}
		if err == nil {
			err = c.deliver(ctx, st, buf[:st.Len], scratch[:])
		}
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("replicate: %w", channel.ErrClosed)
			}
			c.box.fail(err)
			return
		}
	}
}

func (c *Comm) deliver(ctx context.Context, st channel.Status, rec, scratch []byte) error {
	from := c.m.Place(st.Source)
	if from.Virtual != c.me.Virtual {
		return fmt.Errorf("%w: a discovery record from native rank %d, not a replica of rank %d", ErrWire, st.Source, c.me.Virtual)
	}
	switch st.Tag {
	case tagReport:
		rep, err := decodeReport(rec, c.m.n, c.r)
		if err != nil {
			return err
		}
		c.box.put(boxKey{'R', msgID{rep.Src, rep.Tag, rep.Seq}, from.Replica}, boxItem{rep: rep})
	case tagVerdict:
		v, err := decodeVerdict(rec, c.m.n, c.r)
		if err != nil {
			return err
		}
		if v.From != from.Replica {
			return fmt.Errorf("%w: a verdict from native rank %d (replica %d) signed replica %d", ErrWire, st.Source, from.Replica, v.From)
		}
		id := msgID{v.Src, v.Tag, v.Seq}
		var data []byte
		if v.Outcome == outcomeCorrect {
			if n, ok := c.box.expected(id); ok && uint64(n) == v.Len {
				data = make([]byte, n)
				if _, err := recvExact(ctx, c.fix, st.Source, 0, data); err != nil {
					return err
				}
			} else if _, err := c.fix.Recv(ctx, st.Source, 0, scratch); err != nil && !errors.Is(err, channel.ErrTruncated) {
				return err
			} else {
				v.Outcome = outcomeNone // not the length waited for: no correction
			}
		}
		c.box.put(boxKey{'V', id, from.Replica}, boxItem{ver: v, data: data})
	default:
		return fmt.Errorf("%w: discovery record with tag %d", ErrWire, st.Tag)
	}
	return nil
}
