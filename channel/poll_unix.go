//go:build unix

package channel

import (
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"
)

// pollSpin bounds how long a link's reader polls its socket, once it
// finds it empty, before it sleeps in the runtime's poller (epoll), as
// Open MPI's progress engine polls before it blocks. It is off (0) unless
// SIGCHECK_POLL sets it (a duration: SIGCHECK_POLL=20us), because on the
// machine it was measured on — 2 cores under a load average of 13–16 —
// polling cost more than it saved: sigcheck run -transport tcp latency,
// one-way at 1 B / 1 KiB / 64 KiB, was 24–34 / 11 / 22–25 µs blocking,
// 21–27 / 16–17 / 20–26 µs polling 10 µs, and 55–62 / 56–57 / 61–73 µs
// polling 50 µs: a spinning thread spends its time slice and then waits
// behind every other runnable task, where a sleeping one is woken ahead
// of them. On a machine with idle cores polling is what makes MPI's
// small-message latency; there, set it.
var pollSpin = func() time.Duration {
	d, err := time.ParseDuration(os.Getenv("SIGCHECK_POLL"))
	if err != nil || d < 0 {
		return 0
	}
	return min(d, time.Millisecond) // bounded, whatever the environment says
}()

// pollReader reads a connection's socket as Open MPI's progress engine
// does: it tries the read itself and, while the socket is empty, polls it
// again for at most pollSpin before it lets the runtime park it on the
// poller. Every empty poll yields the processor first (runtime.Gosched),
// so that a goroutine this reader just woke — the receive its frame
// completed — runs at once on this core, and a busy goroutine or the
// other rank of a 2-core machine is never kept off it: the poll only
// takes a core nobody else wants, and never for longer than pollSpin
// (TestPollYields).
type pollReader struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool // poll, made once: a closure per Read would allocate
	buf []byte                // the Read in progress
	n   int
	err error
}

// newPollReader returns a polling reader of c, or c itself when it is not
// a socket (a proxy's or a pipe's connection) or polling is off: then the
// runtime's blocking read it is.
func newPollReader(c net.Conn) io.Reader {
	sc, ok := c.(syscall.Conn)
	if !ok || pollSpin == 0 {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	p := &pollReader{rc: rc}
	p.fn = p.poll
	return p
}

func (p *pollReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	p.buf, p.n, p.err = b, 0, nil
	err := p.rc.Read(p.fn)
	n, rerr := p.n, p.err
	p.buf = nil // the caller's buffer is not ours to keep
	switch {
	case err != nil: // closed, or a deadline
		return 0, err
	case rerr != nil:
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: rerr}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// poll reads what the socket holds, or polls it for at most pollSpin;
// false sends the goroutine to sleep until the socket is readable (the
// runtime then calls poll again).
func (p *pollReader) poll(fd uintptr) bool {
	var start time.Time
	for {
		n, err := syscall.Read(int(fd), p.buf)
		switch err {
		case nil:
			p.n = n
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
		default:
			p.err = err
			return true
		}
		if start.IsZero() {
			start = time.Now()
		} else if time.Since(start) > pollSpin {
			return false
		}
		runtime.Gosched()
	}
}

// tryWriter writes to a socket only what it takes at once: the control
// frames a link's reader sends itself (tcpTx.trySend), which must never
// wait for a peer that may be waiting for this reader.
type tryWriter struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool // write, made once
	b   []byte
	n   int
	err error
}

// newTryWriter returns a tryWriter of c, or nil when c is not a socket.
func newTryWriter(c net.Conn) *tryWriter {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &tryWriter{rc: rc}
	w.fn = w.write1
	return w
}

// write writes what of b the socket takes now: all of it, a part, or
// nothing (0 and no error) when its buffer is full.
func (w *tryWriter) write(b []byte) (int, error) {
	w.b, w.n, w.err = b, 0, nil
	err := w.rc.Write(w.fn)
	n, werr := w.n, w.err
	w.b = nil
	switch {
	case err != nil:
		return 0, err
	case werr == syscall.EAGAIN:
		return 0, nil
	case werr != nil:
		return 0, werr
	}
	return n, nil
}

// write1 is one non-blocking write; true: never wait for the poller.
func (w *tryWriter) write1(fd uintptr) bool {
	for {
		n, err := syscall.Write(int(fd), w.b)
		if err != syscall.EINTR {
			w.n, w.err = max(n, 0), err
			return true
		}
	}
}
