package tcp

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
)

// failingListener returns errs from Accept, one a call, before it
// accepts from the listener it wraps; a nil in errs fails every Accept
// from there on with EMFILE.
type failingListener struct {
	net.Listener
	mu   sync.Mutex
	errs []error
	n    int // Accept calls that failed
}

func (l *failingListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if len(l.errs) > 0 {
		err := l.errs[0]
		if err == nil {
			l.n++
			l.mu.Unlock()
			return nil, acceptError(l.Addr(), syscall.EMFILE)
		}
		l.errs = l.errs[1:]
		l.n++
		l.mu.Unlock()
		return nil, err
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

func (l *failingListener) failed() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// acceptError is the error a TCP listener's Accept returns for errno.
func acceptError(addr net.Addr, errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Addr: addr, Err: os.NewSyscallError("accept4", errno)}
}

// connectWith forms a job of n ranks over loopback TCP with rank 0 on
// ln, and closes its endpoints when the test ends.
func connectWith(t *testing.T, ctx context.Context, n int, ln net.Listener) error {
	t.Helper()
	eps := make([]*channel.Endpoint, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		cfg := Config{Rank: r, Size: n, Root: ln.Addr().String(), Secret: []byte("s")}
		if r == 0 {
			cfg.Listener = ln
		}
		wg.Go(func() { eps[r], errs[r] = Connect(ctx, cfg) })
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, ep := range eps {
			if ep != nil {
				ep.Close()
			}
		}
	})
	return errs[0]
}

// TestTCPAcceptWaitsOutTemporaryErrors: rank 0 out of descriptors for a
// while (a local user holding them all as the job forms), or meeting any
// other accept error that passes, waits it out and the job forms; before,
// the first such error ended the joining with "listener closed".
func TestTCPAcceptWaitsOutTemporaryErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr()
	fl := &failingListener{Listener: ln, errs: []error{
		acceptError(addr, syscall.EMFILE),
		acceptError(addr, syscall.EMFILE),
		acceptError(addr, syscall.ENFILE),
		acceptError(addr, syscall.ECONNABORTED),
		&net.OpError{Op: "accept", Net: "tcp", Addr: addr, Err: os.ErrDeadlineExceeded},
		acceptError(addr, syscall.EMFILE),
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	if err := connectWith(t, ctx, 3, fl); err != nil {
		t.Fatal(err)
	}
	if n := fl.failed(); n != 6 {
		t.Fatalf("%d accepts failed, want 6", n)
	}
	// 5, 10, 20, 40, 80 and 160 ms of pauses: the errors were waited out,
	// not spun through.
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("the job formed in %v past 6 accept errors: no backoff", took)
	}
}

// TestTCPAcceptGivesUp: an accept error that lasts is waited out only
// until the joining's context is done, and the error says what it was;
// one that is not temporary ends the joining at once.
func TestTCPAcceptGivesUp(t *testing.T) {
	t.Run("temporary", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		fl := &failingListener{Listener: ln, errs: []error{nil}}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		ep, err := Connect(ctx, Config{Rank: 0, Size: 2, Secret: []byte("s"), Listener: fl})
		took := time.Since(start)
		if ep != nil {
			ep.Close()
		}
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, syscall.EMFILE) {
			t.Fatalf("want the deadline and EMFILE, got %v", err)
		}
		if took > 2*time.Second {
			t.Errorf("gave up %v after a context of 300 ms", took)
		}
		if n := fl.failed(); n < 3 || n > 20 {
			t.Errorf("%d accepts in 300 ms", n)
		}
	})
	t.Run("broken", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		broken := errors.New("broken listener")
		fl := &failingListener{Listener: ln, errs: []error{broken}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ep, err := Connect(ctx, Config{Rank: 0, Size: 2, Secret: []byte("s"), Listener: fl})
		if ep != nil {
			ep.Close()
		}
		if !errors.Is(err, broken) || ctx.Err() != nil {
			t.Fatalf("want the accept error at once, got %v", err)
		}
	})
}

// pipeListener accepts n in-memory connections, then waits for Close.
type pipeListener struct {
	n        int
	mu       sync.Mutex
	accepted int
	peers    []net.Conn // the other ends
	closed   chan struct{}
	once     sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.accepted < l.n {
		l.accepted++
		a, b := net.Pipe()
		l.peers = append(l.peers, b)
		l.mu.Unlock()
		return a, nil
	}
	l.mu.Unlock()
	<-l.closed
	return nil, net.ErrClosed
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

func (l *pipeListener) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accepted
}

// TestAcceptRanksCapsHandshakes: more connections than maxHandshakes,
// all of them slow to shake hands, never have more than maxHandshakes
// handshakes under way, and the rest are taken as those end.
func TestAcceptRanksCapsHandshakes(t *testing.T) {
	const want = maxHandshakes + 16
	ln := &pipeListener{n: want, closed: make(chan struct{})}
	defer func() {
		for _, c := range ln.peers {
			c.Close()
		}
	}()
	var running, most, next atomic.Int32
	release := make(chan struct{})
	shake := func(c net.Conn) (joined, error) {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		running.Add(-1)
		return joined{rank: int(next.Add(1)), c: c}, nil
	}
	tx := &tx{cfg: Config{HandshakeTimeout: 10 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type result struct {
		joins map[int]joined
		err   error
	}
	out := make(chan result, 1)
	go func() {
		joins, err := tx.acceptRanks(ctx, ln, want, shake)
		out <- result{joins, err}
	}()
	for running.Load() < maxHandshakes {
		select {
		case r := <-out:
			t.Fatalf("acceptRanks returned early: %v", r.err)
		case <-time.After(time.Millisecond):
		}
	}
	time.Sleep(100 * time.Millisecond) // time for any more to start
	if n, a := running.Load(), ln.count(); n != maxHandshakes || a != maxHandshakes {
		t.Errorf("%d handshakes under way and %d connections accepted, want %d", n, a, maxHandshakes)
	}
	close(release)
	r := <-out
	if r.err != nil || len(r.joins) != want {
		t.Fatalf("%d joins, %v", len(r.joins), r.err)
	}
	for _, j := range r.joins {
		j.c.Close()
	}
	if m := most.Load(); m > maxHandshakes {
		t.Errorf("%d handshakes ran at once, the cap is %d", m, maxHandshakes)
	}
}
