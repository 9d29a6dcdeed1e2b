package channel

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sigcheck/sigcheck/channel/transport"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// errNoSecret is returned when a TCP job has no secret: there would be no
// way to tell its ranks from anyone who connects.
var errNoSecret = errors.New("channel: no job secret (set SIGCHECK_SECRET, or TCPConfig.Secret)")

// TCPConfig says how a rank joins a job over TCP.
type TCPConfig struct {
	Rank, Size int
	// Root is rank 0's address (host:port): rank 0 listens there, the
	// others connect to it to learn each other's addresses.
	Root string
	// Secret is the job's shared secret: every connection proves both
	// ends know it (HMAC challenge), so a process of another job, or none,
	// is refused. Required when Size > 1.
	Secret []byte
	// Listener, for rank 0 only, is an open listener to use instead of
	// listening on Root (for a launcher that picks the port itself).
	// ConnectTCP closes it once every rank has joined.
	Listener net.Listener
	// Injector, if set, damages this rank's outgoing frames (tests and
	// benchmarks of the protection).
	Injector *Injector
	// HandshakeTimeout bounds each connection's handshake (default 10 s),
	// so that a stranger who connects and says nothing is dropped.
	HandshakeTimeout time.Duration
	// Options apply to the endpoint as to NewLocal's (WithHeldLimit).
	Options []TransportOption
	// Dial, if set, opens this rank's connections to the others instead
	// of a plain TCP dial: through a proxy, or, in tests, through one
	// that damages frames on real sockets (channel/chaos). Every
	// connection is authenticated all the same.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// Congestion is the TCP congestion control of this rank's links
	// (Linux): empty, Reno on a link within one host and the system's
	// on any other (congestion.go says why); CongestionSystem, the
	// system's on all; another name, that one on all (a name the kernel
	// refuses fails ConnectTCP, as any name does off Linux).
	Congestion string
}

func (cfg *TCPConfig) check() error {
	switch {
	case cfg.Size < 1 || cfg.Size > wire.MaxRanks:
		return fmt.Errorf("%w: a job of %d ranks", ErrRank, cfg.Size)
	case cfg.Rank < 0 || cfg.Rank >= cfg.Size:
		return fmt.Errorf("%w: rank %d of %d", ErrRank, cfg.Rank, cfg.Size)
	case cfg.Size > 1 && len(cfg.Secret) == 0:
		return errNoSecret
	case cfg.Size > 1 && cfg.Root == "" && (cfg.Rank != 0 || cfg.Listener == nil):
		return errors.New("channel: no root address (set SIGCHECK_ROOT, or TCPConfig.Root)")
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if cc := cfg.Congestion; cc != "" && cc != CongestionSystem {
		return checkCongestion(cc)
	}
	return nil
}

// ConnectTCP joins the job: rank 0 listens on Root and tells every rank
// where the others listen; each rank then connects to the ranks below it
// and accepts those above, every connection authenticated, until all
// Size-1 links are up. It returns when they are, or with the context
// (ranks other than 0 retry rank 0 until it listens: a launcher starts
// them in any order). The context bounds the joining only: an accept
// that fails for want of file descriptors is tried again, backing off,
// until it is done, and a rank runs at most maxHandshakes (64)
// handshakes at once (acceptRanks).
func ConnectTCP(ctx context.Context, cfg TCPConfig) (*Endpoint, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	var t *tcpTx
	ep, err := NewEndpoint(cfg.Rank, cfg.Size, func(f Frames) (Transport, error) {
		t = &tcpTx{f: f, key: wire.JobKey(cfg.Secret), cfg: cfg, conns: make([]*tcpConn, cfg.Size)}
		ranksHere.Add(1)
		return t, nil
	}, append(slices.Clip(cfg.Options), WithInjector(cfg.Injector))...)
	if err != nil || cfg.Size == 1 {
		return ep, err
	}
	if cfg.Rank == 0 {
		err = t.bootRoot(ctx)
	} else {
		err = t.bootRank(ctx)
	}
	if err != nil {
		ep.Close()
		return nil, err
	}
	return ep, nil
}

// ranksHere counts the TCP ranks open in this process (ConnectTCP,
// ConnectLoopback): their links' readers poll only while it is one
// (poll_load.go).
var ranksHere atomic.Int32

type tcpTx struct {
	closed atomic.Bool // Close was called (ranksHere counts it no more)
	f      Frames
	key    []byte
	cfg    TCPConfig
	mu     sync.Mutex
	conns  []*tcpConn
	wg     sync.WaitGroup // reader goroutines

	anyWaiters atomic.Int32 // goroutines waiting for frames of any peer (transport.Progresser)
}

const sockBuf = 4 << 20

// maxTryIov bounds the buffers a write tries at once (tryWriter.writev)
// and a piece holds (takePiece); the kernel takes up to IOV_MAX, 1024 on
// Linux.
const maxTryIov = 64

// headerBuf is the buffer a link's headers are read through: a read for
// a header takes in what follows it too, up to this much, so that a
// burst of small frames costs one system call. It is small because what
// a header's read takes of a large payload is copied twice (socket to
// buffer to destination); the rest of the payload goes straight from the
// socket into its destination. At 64 KiB, a 64 KiB message's payload
// was mostly copied twice, and its ping-pong was measurably slower,
// unprotected and under checksums (BenchmarkLatency/transport=tcp/
// size=64KiB).
const headerBuf = 16 << 10

type tcpConn struct {
	c   net.Conn
	r   io.Reader // c, read by polling where it can be (poll_unix.go)
	br  *bufio.Reader
	wdl time.Time // the write deadline set on c (under wmu)
	wmu sync.Mutex
	// Writes watched for their context (watch): their number (under
	// wmu), and that of the last whose watch has fired and set its
	// deadline.
	watches uint64
	watched atomic.Uint64
	hdr     [wire.HeaderSize]byte
	out     [2][]byte   // header and payload of the frame being written (under wmu)
	bufs    net.Buffers // over out: a field, so that writing allocates nothing
	// A batch of frames being written (SendBatch, under wmu): their
	// headers, and the header and payload of each.
	hdrs  []byte
	batch net.Buffers
	// The piece of bufs being tried (write, under wmu): at most
	// writePiece bytes, over the array pieces.
	piece  net.Buffers
	pieces [maxTryIov][]byte
	once   sync.Once
	link   []byte // the link secret of the connection's handshake
	// try writes control frames without waiting (TrySend; nil: none),
	// from cbuf (under wmu).
	try  *tryWriter
	cbuf []byte
	rd   linkRead // who reads it, and how (tcpread.go)
}

// close closes the connection, once.
func (tc *tcpConn) close() {
	tc.once.Do(func() {
		tc.c.Close()
		close(tc.rd.dead)
	})
}

// deadline returns when a handshake begun now must be over.
func (t *tcpTx) deadline(ctx context.Context) time.Time {
	d := time.Now().Add(t.cfg.HandshakeTimeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		return cd
	}
	return d
}

// bootRoot is rank 0's side of the bootstrap: accept every other rank,
// learn where it listens, and send everyone the table.
func (t *tcpTx) bootRoot(ctx context.Context) error {
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
		p, err := wire.ServerHandshake(c, t.key, 0, size)
		if err != nil {
			return joined{}, err
		}
		addr, err := wire.ReadAddr(c)
		return joined{p.Rank, c, addr, p.Link}, err
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
		if _, err := j.c.Write(table); err != nil {
			for _, j := range joins {
				j.c.Close()
			}
			return fmt.Errorf("sending the table to rank %d: %w", r, err)
		}
	}
	for r, j := range joins {
		t.attach(r, j.c, j.link)
	}
	return nil
}

type joined struct {
	rank int
	c    net.Conn
	addr string
	link []byte // the link secret of its handshake
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
func (t *tcpTx) acceptRanks(ctx context.Context, ln net.Listener, want int, shake func(net.Conn) (joined, error)) (map[int]joined, error) {
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
	// closed), or the temporary one it is waiting out.
	var acceptMu sync.Mutex
	var acceptErr error
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
func (t *tcpTx) dialRetry(ctx context.Context, addr string) (net.Conn, error) {
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

// dialOnce opens a connection to addr (TCPConfig.Dial, or TCP).
func (t *tcpTx) dialOnce(ctx context.Context, addr string) (net.Conn, error) {
	if t.cfg.Dial != nil {
		return t.cfg.Dial(ctx, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// bootRank is the bootstrap of a rank > 0: join through rank 0, then
// connect to the ranks below and accept those above.
func (t *tcpTx) bootRank(ctx context.Context) error {
	c, err := t.dialRetry(ctx, t.cfg.Root)
	if err != nil {
		return fmt.Errorf("joining through rank 0 at %s: %w", t.cfg.Root, err)
	}
	c.SetDeadline(t.deadline(ctx))
	root, err := wire.ClientHandshake(c, t.key, t.cfg.Rank, t.cfg.Size, 0)
	if err != nil {
		c.Close()
		return err
	}
	// Listen on the interface that reaches rank 0: the others reach us there.
	host, _, _ := net.SplitHostPort(c.LocalAddr().String())
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		c.Close()
		return err
	}
	defer ln.Close()
	if _, err := c.Write(wire.EncodeAddr(ln.Addr().String())); err != nil {
		c.Close()
		return err
	}
	c.SetDeadline(time.Time{}) // the others may take a while to join
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	addrs, err := wire.ReadTable(c, t.cfg.Size)
	stop()
	if err != nil {
		c.Close()
		return fmt.Errorf("waiting for the table from rank 0: %w", err)
	}
	c.SetDeadline(time.Time{})
	t.attach(0, c, root.Link)

	errs := make(chan error, t.cfg.Size)
	for r := 1; r < t.cfg.Rank; r++ {
		go func() { errs <- t.dial(ctx, r, addrs[r]) }()
	}
	go func() {
		joins, err := t.acceptRanks(ctx, ln, t.cfg.Size-1-t.cfg.Rank, func(c net.Conn) (joined, error) {
			p, err := wire.ServerHandshake(c, t.key, t.cfg.Rank, t.cfg.Size)
			if err == nil && p.Rank < t.cfg.Rank {
				err = fmt.Errorf("%w: rank %d connected to rank %d, the lower rank is to wait", ErrUnauthenticated, p.Rank, t.cfg.Rank)
			}
			return joined{rank: p.Rank, c: c, link: p.Link}, err
		})
		if err != nil {
			errs <- fmt.Errorf("waiting for the ranks above %d: %w", t.cfg.Rank, err)
			return
		}
		for r, j := range joins {
			t.attach(r, j.c, j.link)
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

func (t *tcpTx) dial(ctx context.Context, r int, addr string) error {
	c, err := t.dialOnce(ctx, addr)
	if err != nil {
		return fmt.Errorf("connecting to rank %d at %s: %w", r, addr, err)
	}
	c.SetDeadline(t.deadline(ctx))
	p, err := wire.ClientHandshake(c, t.key, t.cfg.Rank, t.cfg.Size, r)
	if err != nil {
		c.Close()
		return fmt.Errorf("rank %d at %s: %w", r, addr, err)
	}
	c.SetDeadline(time.Time{})
	t.attach(r, c, p.Link)
	return nil
}

// attach makes c the link to rank r, whose handshake gave the link
// secret link, and starts reading frames from it.
func (t *tcpTx) attach(r int, c net.Conn, link []byte) {
	if tc, ok := c.(*net.TCPConn); ok {
		// Room for a few frames in flight each way (the kernel caps it).
		tc.SetReadBuffer(sockBuf)
		tc.SetWriteBuffer(sockBuf)
		if cc := congestion(&t.cfg, c.LocalAddr(), c.RemoteAddr()); cc != "" {
			setCongestion(tc, cc) // checked by ConnectTCP if chosen; Reno is every process's to choose
		}
	}
	pr := newPollReader(c)
	tc := &tcpConn{c: c, r: pr, br: bufio.NewReaderSize(pr, headerBuf), link: link, try: newTryWriter(c)}
	tc.rd.lazyCtx = setPark(pr, tc.armCtx)
	tc.initRead()
	t.mu.Lock()
	t.conns[r] = tc
	t.mu.Unlock()
	t.wg.Go(func() { t.readLoop(r, tc) })
}

// LinkSecret returns the secret of the link to peer (LinkKey).
func (t *tcpTx) LinkSecret(peer int) ([]byte, error) {
	if tc := t.conn(peer); tc != nil {
		return tc.link, nil
	}
	return nil, &PeerError{Rank: peer, Err: errors.New("no connection")}
}

func (t *tcpTx) conn(r int) *tcpConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.conns[r]
}

// fail closes the link to r and tells the engine.
func (t *tcpTx) fail(r int, tc *tcpConn, err error) {
	tc.close()
	if errors.Is(err, io.EOF) {
		err = errors.New("connection closed")
	}
	t.f.Lost(r, err)
}

func (t *tcpTx) Send(ctx context.Context, dst int, h wire.Header, payload []byte) error {
	tc := t.conn(dst)
	if tc == nil {
		return &PeerError{Rank: dst, Err: errors.New("no connection")}
	}
	tc.wmu.Lock()
	defer tc.wmu.Unlock()
	h.Put(tc.hdr[:])
	tc.out = [2][]byte{tc.hdr[:], payload}
	tc.bufs = tc.out[:]
	err := tc.write(ctx)
	tc.out[1] = nil // the caller's buffer is not ours to keep
	return t.sent(ctx, dst, tc, err)
}

// writePiece is the most that write hands the kernel in one system
// call. The kernel sends what a call queues only at the end of the call
// (or once half the peer's window waits): over loopback, a 1 MiB frame
// written in one writev was all copied into the socket before the
// receiver could start to copy any of it out. In calls of 256 KiB the
// receiver copies out each piece while the sender copies in the next,
// and a large message arrives much sooner (C Open MPI writes fragments
// of 128 KiB after a first one of 64 KiB, for the same reason); smaller
// pieces cost more calls and more wake-ups than they gain. A plain C
// ping-pong over sockets of the same buffers, spinning on non-blocking
// reads, behaves the same. scripts/tcp-latency.sh measures the 1 MiB
// ping-pong between processes beside C Open MPI's, and
// BenchmarkLatency/transport=tcp/size=1MiB in one process.
const writePiece = 256 << 10

// Piece is transport.Piecer's: the engine frames and hashes protected
// messages in pieces of one write, so that hashing one overlaps the
// kernel's copy of the one before.
func (t *tcpTx) Piece() int { return writePiece }

// write writes tc.bufs (under wmu) under ctx: in pieces of at most
// writePiece bytes, each tried without waiting, while the socket takes
// them whole; once it does not — it is full: the receiver is behind and
// has plenty to copy, and pieces would only cost calls (a measurable
// share of a stream's bandwidth: BenchmarkBandwidth/transport=tcp) —
// the rest goes in one write that waits for the socket, under a watch of
// ctx (watch allocates: a frame the socket takes at once, a small one
// mostly, needs none).
func (tc *tcpConn) write(ctx context.Context) error {
	tc.setDeadline(ctx) // a deadline an earlier send's watch left must not fail this one
	for tc.try != nil && len(tc.bufs) > 0 {
		k := tc.takePiece()
		n, err := tc.try.writev(tc.piece)
		clear(tc.piece) // the callers' buffers are not ours to keep
		if err != nil {
			return err
		}
		consume(&tc.bufs, n)
		if n < k {
			break
		}
	}
	if len(tc.bufs) == 0 {
		return nil
	}
	w := tc.watch(ctx)
	_, err := tc.bufs.WriteTo(tc.c)
	tc.unwatch(w)
	return err
}

// takePiece sets tc.piece to the first writePiece bytes of tc.bufs (all,
// if fewer), in at most len(tc.pieces) buffers, without the empty ones,
// and returns its length. A buffer is cut only if more than pieceSlack
// of it would be left: frames of 256 KiB of payload are 256 KiB and a
// header on the wire, and cut at 256 KiB each left a write of 32 bytes.
func (tc *tcpConn) takePiece() int {
	tc.piece = tc.pieces[:0]
	k := 0
	for _, b := range tc.bufs {
		if k >= writePiece || len(tc.piece) == len(tc.pieces) {
			break
		}
		if room := writePiece - k; len(b) > room+pieceSlack {
			b = b[:room]
		}
		if len(b) > 0 {
			tc.piece = append(tc.piece, b)
			k += len(b)
		}
	}
	return k
}

// pieceSlack is how much more than writePiece a piece may hold rather
// than leave a sliver for a write of its own.
const pieceSlack = 4 << 10

// consume drops the first n bytes of bufs, the buffers they empty, and
// the empty buffers after them: a frame written whole must not go on to
// a write of nothing (a frame without payload), which fails if the
// peer, having read the frame, has closed the connection meanwhile.
func consume(bufs *net.Buffers, n int) {
	for len(*bufs) > 0 && (n > 0 || len((*bufs)[0]) == 0) {
		k := min(n, len((*bufs)[0]))
		if (*bufs)[0] = (*bufs)[0][k:]; len((*bufs)[0]) == 0 {
			*bufs = (*bufs)[1:]
		}
		n -= k
	}
}

// sent ends a write to dst: an error breaks the link.
func (t *tcpTx) sent(ctx context.Context, dst int, tc *tcpConn, err error) error {
	if err != nil {
		t.fail(dst, tc, err)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &PeerError{Rank: dst, Err: err}
	}
	return nil
}

// setDeadline sets the write deadline of tc to ctx's (under wmu).
// Setting it takes the poller's lock: skipped when it does not change,
// as for the sends without one.
func (tc *tcpConn) setDeadline(ctx context.Context) {
	if dl, _ := ctx.Deadline(); !dl.Equal(tc.wdl) {
		tc.c.SetWriteDeadline(dl)
		tc.wdl = dl
	}
}

// watch makes ctx, if it can be canceled, interrupt a write under it
// (under wmu, the write deadline already set: write); unwatch disarms it.
func (tc *tcpConn) watch(ctx context.Context) writeWatch {
	// A context done mid-write interrupts it; the link is then broken
	// (half a frame is on the wire) and the peer is lost. (A context that
	// is never done, as most sends' are, needs no watching.)
	if ctx.Done() == nil {
		return writeWatch{}
	}
	tc.wdl = time.Unix(1, 0) // unknown now: the next send sets its own
	tc.watches++
	n := tc.watches
	return writeWatch{n, context.AfterFunc(ctx, func() {
		tc.c.SetWriteDeadline(time.Now())
		tc.watched.Store(n)
	})}
}

// writeWatch is a write's watch (watch): its number and what disarms it.
type writeWatch struct {
	n    uint64
	stop func() bool
}

// unwatch disarms a write's watch (under wmu). Once it returns the watch
// has done all it will: if the context was done as the write ended, its
// deadline is set now, not later on a goroutine of its own — over the
// deadline of the next send, which would then fail, and break the link,
// for a context not its own.
func (tc *tcpConn) unwatch(w writeWatch) {
	if w.stop == nil || w.stop() {
		return
	}
	for tc.watched.Load() != w.n { // started: the wait of a call
		runtime.Gosched()
	}
}

// SendBatch is transport.BatchSender's: the frames go in one writev, in order.
func (t *tcpTx) SendBatch(ctx context.Context, dst int, hs []wire.Header, ps [][]byte) error {
	tc := t.conn(dst)
	if tc == nil {
		return &PeerError{Rank: dst, Err: errors.New("no connection")}
	}
	tc.wmu.Lock()
	defer tc.wmu.Unlock()
	if n := len(hs) * wire.HeaderSize; cap(tc.hdrs) < n {
		tc.hdrs = make([]byte, n)
	}
	tc.batch = tc.batch[:0]
	for i, h := range hs {
		b := tc.hdrs[i*wire.HeaderSize : (i+1)*wire.HeaderSize]
		h.Put(b)
		tc.batch = append(tc.batch, b, ps[i])
	}
	tc.bufs = tc.batch // WriteTo consumes the slice it is given; a local would escape (allocate)
	err := tc.write(ctx)
	clear(tc.batch) // the callers' buffers are not ours to keep
	return t.sent(ctx, dst, tc, err)
}

// maxTrySend bounds the frames TrySend writes: control frames (verdicts,
// asks), not data.
const maxTrySend = 4 << 10

// TrySend sends a control frame now if it can without waiting: the
// link's writer is free and the socket takes the frame. It is how a
// link's reader sends the verdicts it makes (ctlQueue.handled) without
// waking the control goroutine. It reports false if nothing was sent.
// A frame the socket takes only part of is finished by a goroutine that
// holds the writer until it is, so that the reader never waits.
func (t *tcpTx) TrySend(dst int, h wire.Header, payload []byte) bool {
	tc := t.conn(dst)
	if tc == nil || tc.try == nil || len(payload) > maxTrySend || !tc.wmu.TryLock() {
		return false
	}
	tc.cbuf = append(append(tc.cbuf[:0], make([]byte, wire.HeaderSize)...), payload...)
	h.Put(tc.cbuf)
	n, err := tc.try.write(tc.cbuf)
	switch {
	case err != nil || n == 0:
		// Nothing went: the control goroutine sends it, and meets the
		// error again if there is one (and then reports the link lost).
		tc.wmu.Unlock()
		return false
	case n < len(tc.cbuf):
		rest := tc.cbuf[n:]
		go func() {
			defer tc.wmu.Unlock()
			tc.wdl = time.Now().Add(30 * time.Second) // as the control goroutine's
			tc.c.SetWriteDeadline(tc.wdl)
			if _, err := tc.c.Write(rest); err != nil {
				t.fail(dst, tc, err)
			}
		}()
		return true
	}
	tc.wmu.Unlock()
	return true
}

func (t *tcpTx) Abort(peer int, err error) {
	if tc := t.conn(peer); tc != nil {
		t.fail(peer, tc, err)
	}
}

func (t *tcpTx) Close() error {
	if t.closed.CompareAndSwap(false, true) {
		ranksHere.Add(-1)
	}
	t.mu.Lock()
	conns := append([]*tcpConn(nil), t.conns...)
	t.mu.Unlock()
	for _, tc := range conns {
		if tc != nil {
			tc.close()
		}
	}
	t.wg.Wait()
	return nil
}

// The capabilities the engine finds on TCP (package transport).
var (
	_ transport.Progresser   = (*tcpTx)(nil)
	_ transport.BatchSender  = (*tcpTx)(nil)
	_ transport.TrySender    = (*tcpTx)(nil)
	_ transport.Piecer       = (*tcpTx)(nil)
	_ transport.LinkSecreter = (*tcpTx)(nil)
)
