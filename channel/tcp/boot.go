package tcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// Forming the job: rank 0 accepts every other rank and sends each the
// table of where the others listen (bootRoot); every other rank joins
// through rank 0, then dials the ranks below it and accepts those above
// (bootRank). Every connection is authenticated by the handshake of
// internal/wire before anything else crosses it.

// deadline returns when a handshake begun now must be over.
func (t *tx) deadline(ctx context.Context) time.Time {
	d := time.Now().Add(t.cfg.HandshakeTimeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		return cd
	}
	return d
}

// bootRoot is rank 0's side of the bootstrap: accept every other rank,
// learn where it listens, and send everyone the table.
func (t *tx) bootRoot(ctx context.Context) error {
	ln := t.cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", t.cfg.Root); err != nil {
			return err
		}
	}
	defer ln.Close()
	size := t.cfg.Size
	joins, err := t.acceptRanks(ctx, ln, size-1, func(c net.Conn) (joined, error) {
		opts := t.cfg.authOpts(c.LocalAddr(), c.RemoteAddr())
		p, err := wire.ServerHandshake(c, t.key, 0, size, opts)
		if err != nil {
			return joined{}, err
		}
		j := joined{rank: p.Rank, c: c, link: p.Link}
		if j.auth, err = t.settle(p.Rank, opts, p.Opts); err != nil {
			return joined{}, err
		}
		if j.addr, err = wire.ReadAddr(c); err != nil {
			return joined{}, err
		}
		if j.auth {
			err = readBootTag(c, p.Link, "addr", p.Rank, 0, wire.EncodeAddr(j.addr))
		}
		return j, err
	})
	if err != nil {
		return fmt.Errorf("waiting for the ranks to join at %s: %w", ln.Addr(), err)
	}
	addrs := make([]string, size)
	addrs[0] = ln.Addr().String()
	for r, j := range joins {
		addrs[r] = j.addr
	}
	table := wire.EncodeTable(addrs)
	for r, j := range joins {
		msg := table
		if j.auth {
			msg = append(slices.Clip(table), bootTag(j.link, "table", 0, r, table)...)
		}
		if _, err := j.c.Write(msg); err != nil {
			for _, j := range joins {
				j.c.Close()
			}
			return fmt.Errorf("sending the table to rank %d: %w", r, err)
		}
	}
	for r, j := range joins {
		t.attach(r, j.c, j.link, j.auth)
	}
	return nil
}

type joined struct {
	rank int
	c    net.Conn
	addr string
	link []byte // the link secret of its handshake
	auth bool   // its frames are authenticated (auth.go)
}

// maxHandshakes caps the handshakes acceptRanks runs at once. Each holds
// a connection (a file descriptor) and a goroutine until it ends or its
// deadline (HandshakeTimeout) cuts it off; without a cap, anyone who can
// connect could make a rank hold as many as they open. Past the cap the
// listener is not read: the connections wait in the kernel's backlog, so
// a job that forms beside more silent strangers than this waits for
// their deadlines, rather than a rank running out of descriptors. In a
// job of more than 65 ranks, rank 0 takes its ranks' handshakes 64 at a
// time, each a few round trips on a fresh link.
const maxHandshakes = 64

// Accept's backoff on a temporary error (acceptable), as net/http's
// Server.Serve: from acceptBackoffMin, doubling up to acceptBackoffMax.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// acceptRanks accepts connections on ln until want distinct ranks have
// passed shake (the handshake, each on its own goroutine and deadline, so
// that a silent stranger holds nothing up; at most maxHandshakes at
// once). Strangers, failed handshakes and second claims to a rank are
// dropped and do not count. An accept that fails for want of a resource
// (descriptors, as a local user who opens enough connections can make
// it) or times out is tried again after a pause (acceptable) until ctx
// is done; any other accept error ends the joining. It closes ln.
func (t *tx) acceptRanks(ctx context.Context, ln net.Listener, want int, shake func(net.Conn) (joined, error)) (map[int]joined, error) {
	done := make(chan struct{})
	conns := make(chan net.Conn)
	results := make(chan joined)
	slots := make(chan struct{}, maxHandshakes) // a token per handshake under way
	var wg sync.WaitGroup
	joins := map[int]joined{}
	// Handshakes still under way when the job is formed are strangers'
	// (or a second claim to a rank): they are cut off then, not waited
	// for until their deadlines.
	var mu sync.Mutex
	shaking := map[net.Conn]bool{}
	defer func() {
		close(done)
		ln.Close()
		mu.Lock()
		for c := range shaking {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}()
	// The accept loop's last error: why it stopped (read once conns is
	// closed), or the temporary one it is waiting out; and the last
	// handshake refused, which a job that never forms reports (a rank
	// told Auth on where this one was told off, say).
	var acceptMu sync.Mutex
	var acceptErr, refused error
	lastErr := func() error {
		acceptMu.Lock()
		defer acceptMu.Unlock()
		return acceptErr
	}
	wg.Go(func() {
		defer close(conns)
		var pause time.Duration
		for {
			select {
			case slots <- struct{}{}:
			case <-done:
				return
			}
			c, err := ln.Accept()
			if err != nil {
				<-slots
				acceptMu.Lock()
				acceptErr = err
				acceptMu.Unlock()
				if !acceptable(err) {
					return
				}
				pause = min(max(2*pause, acceptBackoffMin), acceptBackoffMax)
				tm := time.NewTimer(pause)
				select {
				case <-tm.C:
				case <-done: // ctx done, or the job formed
					tm.Stop()
					return
				}
				continue
			}
			pause = 0
			select {
			case conns <- c:
			case <-done:
				c.Close()
				<-slots
				return
			}
		}
	})
	fail := func(err error) (map[int]joined, error) {
		for _, j := range joins {
			j.c.Close()
		}
		return nil, err
	}
	for len(joins) < want {
		select {
		case c, ok := <-conns:
			if !ok {
				return fail(fmt.Errorf("%d of %d ranks missing: accepting: %w", want-len(joins), want, lastErr()))
			}
			mu.Lock()
			shaking[c] = true
			mu.Unlock()
			wg.Go(func() {
				c.SetDeadline(t.deadline(ctx))
				j, err := shake(c)
				mu.Lock()
				delete(shaking, c)
				mu.Unlock()
				<-slots
				if err != nil {
					acceptMu.Lock()
					refused = fmt.Errorf("%v: %w", c.RemoteAddr(), err)
					acceptMu.Unlock()
					c.Close()
					return
				}
				c.SetDeadline(time.Time{})
				select {
				case results <- j:
				case <-done:
					c.Close()
				}
			})
		case j := <-results:
			if _, dup := joins[j.rank]; dup {
				j.c.Close()
				continue
			}
			joins[j.rank] = j
		case <-ctx.Done():
			err := fmt.Errorf("%d of %d ranks missing: %w", want-len(joins), want, ctx.Err())
			if aerr := lastErr(); aerr != nil {
				err = fmt.Errorf("%w (last accept error: %w)", err, aerr)
			}
			acceptMu.Lock()
			if refused != nil {
				err = fmt.Errorf("%w (last refused: %w)", err, refused)
			}
			acceptMu.Unlock()
			return fail(err)
		}
	}
	return joins, nil
}

// acceptable reports whether an Accept error is worth waiting out: the
// process or the system is out of descriptors (EMFILE, ENFILE), a
// connection was reset before it was taken (ECONNABORTED), or a deadline
// passed. The listener is otherwise broken, or closed.
func acceptable(err error) bool {
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return true
	}
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ECONNABORTED)
}

// dialRetry dials addr until it answers or ctx is done: a launcher
// starts the ranks in no particular order, so rank 0 may not listen yet.
func (t *tx) dialRetry(ctx context.Context, addr string) (net.Conn, error) {
	wait := 10 * time.Millisecond
	for {
		c, err := t.dialOnce(ctx, addr)
		if err == nil || ctx.Err() != nil {
			return c, err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (last: %w)", ctx.Err(), err)
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// dialOnce opens a connection to addr (Config.Dial, or TCP).
func (t *tx) dialOnce(ctx context.Context, addr string) (net.Conn, error) {
	if t.cfg.Dial != nil {
		return t.cfg.Dial(ctx, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// bootRank is the bootstrap of a rank > 0: join through rank 0, then
// connect to the ranks below and accept those above.
func (t *tx) bootRank(ctx context.Context) error {
	c, err := t.dialRetry(ctx, t.cfg.Root)
	if err != nil {
		return fmt.Errorf("joining through rank 0 at %s: %w", t.cfg.Root, err)
	}
	c.SetDeadline(t.deadline(ctx))
	opts := t.cfg.authOpts(c.LocalAddr(), c.RemoteAddr())
	root, err := wire.ClientHandshake(c, t.key, t.cfg.Rank, t.cfg.Size, 0, opts)
	if err != nil {
		c.Close()
		return err
	}
	auth, err := t.settle(0, opts, root.Opts)
	if err != nil {
		c.Close()
		return fmt.Errorf("joining through rank 0 at %s: %w", t.cfg.Root, err)
	}
	// Listen on the interface that reaches rank 0: the others reach us there.
	host, _, _ := net.SplitHostPort(c.LocalAddr().String())
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		c.Close()
		return err
	}
	defer ln.Close()
	msg := wire.EncodeAddr(ln.Addr().String())
	if auth {
		msg = append(slices.Clip(msg), bootTag(root.Link, "addr", t.cfg.Rank, 0, msg)...)
	}
	if _, err := c.Write(msg); err != nil {
		c.Close()
		return err
	}
	c.SetDeadline(time.Time{}) // the others may take a while to join
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	addrs, err := wire.ReadTable(c, t.cfg.Size)
	if err == nil && auth {
		err = readBootTag(c, root.Link, "table", 0, t.cfg.Rank, wire.EncodeTable(addrs))
	}
	stop()
	if err != nil {
		c.Close()
		return fmt.Errorf("waiting for the table from rank 0: %w", err)
	}
	c.SetDeadline(time.Time{})
	t.attach(0, c, root.Link, auth)

	errs := make(chan error, t.cfg.Size)
	for r := 1; r < t.cfg.Rank; r++ {
		go func() { errs <- t.dial(ctx, r, addrs[r]) }()
	}
	go func() {
		joins, err := t.acceptRanks(ctx, ln, t.cfg.Size-1-t.cfg.Rank, func(c net.Conn) (joined, error) {
			opts := t.cfg.authOpts(c.LocalAddr(), c.RemoteAddr())
			p, err := wire.ServerHandshake(c, t.key, t.cfg.Rank, t.cfg.Size, opts)
			if err == nil && p.Rank < t.cfg.Rank {
				err = fmt.Errorf("%w: rank %d connected to rank %d, the lower rank is to wait", channel.ErrUnauthenticated, p.Rank, t.cfg.Rank)
			}
			if err != nil {
				return joined{}, err
			}
			auth, err := t.settle(p.Rank, opts, p.Opts)
			return joined{rank: p.Rank, c: c, link: p.Link, auth: auth}, err
		})
		if err != nil {
			errs <- fmt.Errorf("waiting for the ranks above %d: %w", t.cfg.Rank, err)
			return
		}
		for r, j := range joins {
			t.attach(r, j.c, j.link, j.auth)
		}
		errs <- nil
	}()

	var first error
	for range t.cfg.Rank { // the dials (Rank-1) and the acceptor
		if err := <-errs; err != nil && first == nil {
			first = err
			ln.Close()
		}
	}
	return first
}

func (t *tx) dial(ctx context.Context, r int, addr string) error {
	c, err := t.dialOnce(ctx, addr)
	if err != nil {
		return fmt.Errorf("connecting to rank %d at %s: %w", r, addr, err)
	}
	c.SetDeadline(t.deadline(ctx))
	opts := t.cfg.authOpts(c.LocalAddr(), c.RemoteAddr())
	p, err := wire.ClientHandshake(c, t.key, t.cfg.Rank, t.cfg.Size, r, opts)
	if err == nil {
		var auth bool
		if auth, err = t.settle(r, opts, p.Opts); err == nil {
			c.SetDeadline(time.Time{})
			t.attach(r, c, p.Link, auth)
			return nil
		}
	}
	c.Close()
	return fmt.Errorf("rank %d at %s: %w", r, addr, err)
}
