package channel

import (
	"context"
	"sync"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/internal/wire"
)

// ctlQueue sends a receiver's control frames (asks, verdicts) on a
// goroutine of its own. The transport's reading goroutines produce them
// and must never block on a write: two ranks whose readers each waited to
// write to the other, behind full socket buffers, would stop for good.
type ctlQueue struct {
	e       *engine
	mu      sync.Mutex
	q       []ctlFrame
	wake    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

type ctlFrame struct {
	dst     int
	h       wire.Header
	payload []byte
}

func newCtlQueue(e *engine) *ctlQueue {
	c := &ctlQueue{e: e, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go c.run()
	return c
}

// push queues a control frame; it never blocks.
func (c *ctlQueue) push(dst int, h wire.Header, payload []byte) {
	h.Plen = len(payload)
	h.Sum = xxh3.Hash(payload)
	c.mu.Lock()
	c.q = append(c.q, ctlFrame{dst, h, payload})
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *ctlQueue) run() {
	for {
		select {
		case <-c.wake:
		case <-c.stopped:
			return
		}
		for {
			c.mu.Lock()
			if len(c.q) == 0 {
				c.mu.Unlock()
				break
			}
			f := c.q[0]
			c.q = c.q[1:]
			c.mu.Unlock()
			// A peer that cannot take a small frame in this long is as good
			// as lost; the transport then says so.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			c.e.frame(ctx, f.dst, &f.h, f.payload)
			cancel()
		}
	}
}

func (c *ctlQueue) stop() { c.once.Do(func() { close(c.stopped) }) }
