//go:build unix

package tcp

import (
	"bytes"
	"context"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// withPolling turns the polling of links' readers on (at its longest,
// 1 ms, and with several ranks in the process) until the test ends.
func withPolling(t *testing.T) {
	old, oldShared := pollMax, testHookPollShared
	pollMax, testHookPollShared = time.Millisecond, true // the ranks of these tests share the process
	t.Cleanup(func() { pollMax, testHookPollShared = old, oldShared })
}

// TestPollYields: the polling reader gives the CPU back. Two ranks in
// this process on two cores, each polling its socket, beside a third
// goroutine that spins without a call (it leaves the core only when the
// runtime preempts it): the ping-pong still ends, and the busy goroutine
// still runs meanwhile. A reader that held its core while it polled
// would leave the ranks one core for three spinners.
func TestPollYields(t *testing.T) {
	withPolling(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	eps, txs, err := startTxs(2, Config{Secret: []byte("poll")})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	if _, ok := txs[0].conn(1).r.(*pollReader); !ok {
		t.Fatal("the link is not read by polling")
	}
	var spins atomic.Int64
	stop := make(chan struct{})
	busy := make(chan struct{})
	go func() {
		defer close(busy)
		for n := int64(0); ; n++ {
			if n%(1<<16) == 0 {
				spins.Add(1 << 16)
				select {
				case <-stop:
					return
				default:
				}
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const rounds = 300
	msg, buf := pattern(1<<10, 3), make([]byte, 1<<10)
	echo := make(chan error, 1)
	go func() {
		b := make([]byte, len(msg))
		for range rounds {
			if _, err := eps[1].Recv(ctx, 0, 1, b); err != nil {
				echo <- err
				return
			}
			if err := eps[1].Send(ctx, 0, 1, b); err != nil {
				echo <- err
				return
			}
		}
		echo <- nil
	}()
	before := spins.Load()
	for i := range rounds {
		if err := eps[0].Send(ctx, 1, 1, msg); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if _, err := eps[0].Recv(ctx, 1, 1, buf); err != nil {
			t.Fatalf("round %d: %v (the ranks made no progress beside a busy goroutine)", i, err)
		}
		if !bytes.Equal(buf, msg) {
			t.Fatalf("round %d: the echo differs", i)
		}
	}
	if err := <-echo; err != nil {
		t.Fatal(err)
	}
	if spins.Load() == before {
		t.Error("the busy goroutine never ran while the ranks polled")
	}
	close(stop)
	<-busy
}

// TestPollReader: a polling reader reads a stream exactly as the
// connection does, and says io.EOF when the peer closes it.
func TestPollReader(t *testing.T) {
	withPolling(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	data := pattern(3<<20+17, 5)
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return
		}
		defer c.Close()
		for off := 0; off < len(data); {
			n := min(len(data)-off, 1+off%70000) // writes of all sizes
			c.Write(data[off : off+n])
			off += n
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := newPollReader(c)
	if _, ok := r.(*pollReader); !ok {
		t.Fatal("a TCP connection is not read by polling")
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(data))
	}
}

// TestPollHold: once a reader finds its thread preempted while it polls,
// no reader of the process polls for holdMin; found again within a hold
// of the last, the hold doubles, up to holdMax; after a quiet while it
// starts again from holdMin.
func TestPollHold(t *testing.T) {
	h := &pollHold
	h.mu.Lock()
	saved, savedUntil := h.hold, h.until.Load()
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.hold = saved
		h.until.Store(savedUntil)
		h.mu.Unlock()
	}()
	h.until.Store(0)
	t0 := time.Unix(1000, 0) // long ago: the process's real readers are not held
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	if busy(t0) {
		t.Fatal("held before any preemption")
	}
	preempted(t0)
	if !busy(at(holdMin-time.Microsecond)) || busy(at(holdMin)) {
		t.Fatalf("the first hold is not %v", holdMin)
	}
	// Preempted again soon after the hold: twice as long.
	next := at(holdMin + time.Millisecond)
	preempted(next)
	if !busy(next.Add(2*holdMin-time.Microsecond)) || busy(next.Add(2*holdMin)) {
		t.Fatalf("the second hold is not %v", 2*holdMin)
	}
	// Again and again: never more than holdMax.
	for range 20 {
		next = time.Unix(0, h.until.Load())
		preempted(next)
	}
	if d := time.Duration(h.until.Load() - next.UnixNano()); d != holdMax {
		t.Fatalf("a hold of %v, want the bound %v", d, holdMax)
	}
	// A quiet while (longer than the last hold) starts over.
	quiet := time.Unix(0, h.until.Load()).Add(2 * holdMax)
	preempted(quiet)
	if d := time.Duration(h.until.Load() - quiet.UnixNano()); d != holdMin {
		t.Fatalf("after a quiet while a hold of %v, want %v", d, holdMin)
	}
}

// TestPollReadCanceled is TestTCPReadCanceled with the links' readers
// polling: a receive arms its context's watch only once it is about to
// sleep (link.armCtx), and its context must still end it.
func TestPollReadCanceled(t *testing.T) {
	withPolling(t)
	readCanceled(t)
}

// TestPollStops: a reader whose peer writes a byte every 2 ms stops
// polling — its recent waits are long, and it would spin for nothing —
// and is still given every byte; once the bytes come back to back, it
// polls again.
func TestPollStops(t *testing.T) {
	withPolling(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const slow, fast = 20, 20
	next := make(chan struct{})
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return
		}
		defer c.Close()
		for i := range slow {
			time.Sleep(2 * time.Millisecond)
			c.Write([]byte{byte(i)})
		}
		<-next
		for i := range fast { // all at once: the reader finds them waiting
			c.Write([]byte{byte(slow + i)})
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, ok := newPollReader(c).(*pollReader)
	if !ok {
		t.Fatal("a TCP connection is not read by polling")
	}
	var b [1]byte
	for i := range slow {
		if _, err := io.ReadFull(p, b[:]); err != nil || b[0] != byte(i) {
			t.Fatalf("byte %d: %v, %d", i, err, b[0])
		}
	}
	if p.est <= pollMax/2 {
		t.Errorf("after %d waits of 2 ms the reader still polls (waits estimated at %v)", slow, p.est)
	}
	// A short wait brings the estimate down, within a few reads.
	for range 12 {
		p.observe(20 * time.Microsecond)
	}
	if p.est > pollMax/2 {
		t.Errorf("after 12 waits of 20 µs the reader does not poll again (waits estimated at %v)", p.est)
	}
	close(next)
	for i := range fast {
		if _, err := io.ReadFull(p, b[:]); err != nil || b[0] != byte(slow+i) {
			t.Fatalf("byte %d: %v, %d", slow+i, err, b[0])
		}
	}
}
