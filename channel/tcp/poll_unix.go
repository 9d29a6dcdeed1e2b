//go:build unix

package tcp

import (
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"
)

// pollMax bounds how long a link's reader polls its socket, once it
// finds it empty, before it sleeps in the runtime's poller (epoll), as
// Open MPI's progress engine polls before it blocks. SIGCHECK_POLL sets
// it (a duration, at most 1 ms; 0 turns polling off).
//
// Why poll: a thread asleep in epoll_wait must be woken by the peer's
// write, and the writer pays for that wake-up inside its write system
// call: many times what the write costs when the reader is awake, and on
// a small machine most of a small message's latency.
// scripts/tcp-latency.sh measures what polling gains: its sigcheck and
// block rows are the same runs with polling on and off
// (SIGCHECK_POLL=0), beside C Open MPI's.
//
// How it is bounded: a reader polls for at most pollMax a wait, and
// yields to the runtime's other goroutines between polls (so a rank's
// own goroutines are never kept waiting: TestPollYields). It does not
// poll at all while its recent waits were long (observe: the data would
// mostly come after it had given up), nor while the process is being
// preempted (poll_load.go: the machine has more runnable threads than
// cores, and a polling thread would take the core its peer needs), nor
// in a process with more than one TCP rank (pollAlone).
// Beside two busy processes that still costs: see poll_load.go.
var pollMax = func() time.Duration {
	s, ok := os.LookupEnv("SIGCHECK_POLL")
	if !ok {
		return defaultPollMax
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return defaultPollMax
	}
	return min(d, time.Millisecond) // bounded, whatever the environment says
}()

const defaultPollMax = 200 * time.Microsecond

// pollReader reads a connection's socket as Open MPI's progress engine
// does: it tries the read itself and, while the socket is empty, polls it
// again for at most pollMax before it lets the runtime park it on the
// poller. Every empty poll yields the processor first (runtime.Gosched),
// so that a goroutine this reader just woke — the receive its frame
// completed — runs at once on this core, and a busy goroutine or the
// other rank of a 2-core machine is never kept off it (TestPollYields).
// A link is read by one goroutine at a time (its read token), so the
// reader's state needs no lock.
type pollReader struct {
	rc    syscall.RawConn
	fn    func(fd uintptr) bool // poll, made once: a closure per Read would allocate
	buf   []byte                // the Read in progress
	n     int
	err   error
	start time.Time     // when the Read in progress found the socket empty (zero: it has not)
	est   time.Duration // recent waits for data, smoothed (observe)
	// park, if set, is called before the reader sleeps in the runtime's
	// poller: the link arms what cuts that sleep short then, not before
	// every read (linkRead.armCtx), since arming allocates and a read
	// that polls seldom needs it.
	park func()
}

// newPollReader returns a polling reader of c, or c itself when it is not
// a socket (a proxy's or a pipe's connection) or polling is off: then the
// runtime's blocking read it is.
func newPollReader(c net.Conn) io.Reader {
	sc, ok := c.(syscall.Conn)
	if !ok || pollMax == 0 {
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
	p.buf, p.n, p.err, p.start = b, 0, nil, time.Time{}
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

// observe folds a wait for data (from the first empty read to the data,
// polled or slept) into est, a moving average that follows a change of
// pace within a few reads. A wait counts as at most 8 × pollMax, so that
// one long pause does not keep the reader from polling for long once the
// peer answers quickly again.
func (p *pollReader) observe(w time.Duration) {
	w = min(w, 8*pollMax)
	p.est += (w - p.est) / 4
}

// poll reads what the socket holds, or polls it for at most pollMax;
// false sends the goroutine to sleep until the socket is readable (the
// runtime then calls poll again, and it reads at once).
func (p *pollReader) poll(fd uintptr) bool {
	var last time.Time // the previous poll of this call
	for {
		n, err := syscall.Read(int(fd), p.buf)
		switch err {
		case nil:
			if !p.start.IsZero() {
				p.observe(time.Since(p.start))
			}
			p.n = n
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
		default:
			p.err = err
			return true
		}
		now := time.Now()
		switch {
		case p.start.IsZero():
			p.start = now
			if p.est > pollMax/2 || !pollAlone() || busy(now) {
				return p.sleep()
			}
		case !last.IsZero() && now.Sub(last) > preemptGap:
			preempted(now)
			return p.sleep()
		case now.Sub(p.start) >= pollMax:
			return p.sleep()
		}
		last = now
		runtime.Gosched()
	}
}

// sleep lets the runtime park the reader until the socket is readable,
// once the link has armed what may cut that short.
func (p *pollReader) sleep() bool {
	if p.park != nil {
		p.park()
	}
	return false
}

// setPark sets the reader's park hook, if it is a polling reader, and
// reports whether it is.
func setPark(r io.Reader, park func()) bool {
	p, ok := r.(*pollReader)
	if ok {
		p.park = park
	}
	return ok
}

// tryWriter writes to a socket only what it takes at once: the control
// frames a link's reader sends itself (tx.TrySend), which must never
// wait for a peer that may be waiting for this reader.
type tryWriter struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool // write, made once
	fnv func(fd uintptr) bool // writev1, made once
	b   []byte
	iov []syscall.Iovec // writev's buffers
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
	w.fn, w.fnv = w.write1, w.writev1
	return w
}

// write writes what of b the socket takes now: all of it, a part, or
// nothing (0 and no error) when its buffer is full.
func (w *tryWriter) write(b []byte) (int, error) {
	w.b = b
	n, err := w.do(w.fn)
	w.b = nil
	return n, err
}

// do makes one non-blocking write (fn: write1 or writev1) and says what
// went: a full socket is 0 and no error.
func (w *tryWriter) do(fn func(fd uintptr) bool) (int, error) {
	w.n, w.err = 0, nil
	err := w.rc.Write(fn)
	n, werr := w.n, w.err
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

// writev is write for several buffers, in one system call: it writes
// what of bufs the socket takes now — all of it, a part, or nothing (0
// and no error) — where the platform has writev at hand (writev1), and
// nothing elsewhere. Every write tries it first, a piece at a time
// (link.write): only what the socket does not take goes by a write
// that waits, under what interrupts it, which allocates.
func (w *tryWriter) writev(bufs [][]byte) (int, error) {
	if len(bufs) > maxTryIov || !haveWritev {
		return 0, nil
	}
	w.iov = w.iov[:0]
	for _, b := range bufs {
		if len(b) > 0 {
			v := syscall.Iovec{Base: &b[0]}
			v.SetLen(len(b))
			w.iov = append(w.iov, v)
		}
	}
	if len(w.iov) == 0 {
		return 0, nil
	}
	n, err := w.do(w.fnv)
	clear(w.iov) // the caller's buffers are not ours to keep
	return n, err
}
