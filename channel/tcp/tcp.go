package tcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/transport"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// errNoSecret is returned when a TCP job has no secret: there would be no
// way to tell its ranks from anyone who connects.
var errNoSecret = errors.New("tcp: no job secret (set SIGCHECK_SECRET, or tcp.Config.Secret)")

// Config says how a rank joins a job over TCP.
type Config struct {
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
	// Connect closes it once every rank has joined.
	Listener net.Listener
	// Injector, if set, damages this rank's outgoing frames (tests and
	// benchmarks of the protection); it replaces one among the Options.
	Injector *channel.Injector
	// HandshakeTimeout bounds each connection's handshake (default 10 s),
	// so that a stranger who connects and says nothing is dropped.
	HandshakeTimeout time.Duration
	// Options apply to the endpoint as to NewLocal's (WithHeldLimit).
	Options []channel.TransportOption
	// Dial, if set, opens this rank's connections to the others instead
	// of a plain TCP dial: through a proxy, or, in tests, through one
	// that damages frames on real sockets (channel/chaos). Every
	// connection is authenticated all the same.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// Congestion is the TCP congestion control of this rank's links
	// (Linux): empty, Reno on a link within one host and the system's
	// on any other (congestion.go says why); CongestionSystem, the
	// system's on all; another name, that one on all (a name the kernel
	// refuses fails Connect, as any name does off Linux).
	Congestion string
	// Auth says which links carry frames authenticated with keys of
	// their handshake (auth.go): AuthAuto (the zero value), those to
	// other hosts; AuthOn, all; AuthOff, none. Both ends of a link must
	// not be told opposite things (ErrAuthMismatch).
	Auth Auth
}

func (cfg *Config) check() error {
	switch {
	case cfg.Size < 1 || cfg.Size > transport.MaxRanks:
		return fmt.Errorf("%w: a job of %d ranks", channel.ErrRank, cfg.Size)
	case cfg.Rank < 0 || cfg.Rank >= cfg.Size:
		return fmt.Errorf("%w: rank %d of %d", channel.ErrRank, cfg.Rank, cfg.Size)
	case cfg.Size > 1 && len(cfg.Secret) == 0:
		return errNoSecret
	case cfg.Size > 1 && cfg.Root == "" && (cfg.Rank != 0 || cfg.Listener == nil):
		return errors.New("tcp: no root address (set SIGCHECK_ROOT, or tcp.Config.Root)")
	}
	if cfg.Auth < AuthAuto || cfg.Auth > AuthOff {
		return fmt.Errorf("tcp: Config.Auth is %v", cfg.Auth)
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if cc := cfg.Congestion; cc != "" && cc != CongestionSystem {
		return checkCongestion(cc)
	}
	return nil
}

// Connect joins the job: rank 0 listens on Root and tells every rank
// where the others listen; each rank then connects to the ranks below it
// and accepts those above, every connection authenticated, until all
// Size-1 links are up. It returns when they are, or with the context
// (ranks other than 0 retry rank 0 until it listens: a launcher starts
// them in any order). The context bounds the joining only: an accept
// that fails for want of file descriptors is tried again, backing off,
// until it is done, and a rank runs at most maxHandshakes (64)
// handshakes at once (acceptRanks).
func Connect(ctx context.Context, cfg Config) (*channel.Endpoint, error) {
	ep, _, err := connect(ctx, cfg)
	return ep, err
}

// connect is Connect, which also returns the endpoint's transport (for
// the tests).
func connect(ctx context.Context, cfg Config) (*channel.Endpoint, *tx, error) {
	if err := cfg.check(); err != nil {
		return nil, nil, err
	}
	opts := cfg.Options
	if cfg.Injector != nil { // else an injector among the Options stands
		opts = append(slices.Clip(opts), channel.WithInjector(cfg.Injector))
	}
	var t *tx
	ep, err := channel.NewEndpoint(cfg.Rank, cfg.Size, func(f transport.Frames) (transport.Transport, error) {
		t = &tx{f: f, key: wire.JobKey(cfg.Secret), cfg: cfg, conns: make([]*link, cfg.Size)}
		ranksHere.Add(1)
		return t, nil
	}, opts...)
	if err != nil || cfg.Size == 1 {
		return ep, t, err
	}
	if cfg.Rank == 0 {
		err = t.bootRoot(ctx)
	} else {
		err = t.bootRank(ctx)
	}
	if err != nil {
		ep.Close()
		return nil, nil, err
	}
	return ep, t, nil
}

// ranksHere counts the TCP ranks open in this process (Connect,
// Loopback): their links' readers poll only while it is one
// (poll_load.go).
var ranksHere atomic.Int32

// tx is one rank's transport: its links to the other ranks, by rank.
type tx struct {
	closed atomic.Bool // Close was called (ranksHere counts it no more)
	f      transport.Frames
	key    []byte
	cfg    Config
	mu     sync.Mutex
	conns  []*link
	wg     sync.WaitGroup // reader goroutines

	anyWaiters atomic.Int32 // goroutines waiting for frames of any peer (transport.Progresser)
}

// sockBuf is the socket buffer each way of a link: room for a few
// frames in flight (the kernel caps it).
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

// link is the connection to one peer, and its read and write state.
type link struct {
	c   net.Conn
	r   io.Reader // c, read by polling where it can be (poll_unix.go)
	br  *bufio.Reader
	wdl time.Time // the write deadline set on c (under wmu)
	wmu sync.Mutex
	// finishing: a goroutine finishes a frame TrySend wrote part of
	// (Close lets it, for a while).
	finishing atomic.Bool
	// Writes watched for their context (watch): their number (under
	// wmu), and that of the last whose watch has fired and set its
	// deadline.
	watches uint64
	watched atomic.Uint64
	hdr     [transport.HeaderSize]byte
	out     [2][]byte   // header and payload of the frame being written (under wmu)
	bufs    net.Buffers // over out: a field, so that writing allocates nothing
	// A batch of frames being written (SendBatch, under wmu): their
	// headers, and the header and payload of each.
	hdrs  []byte
	batch net.Buffers
	// auth authenticates the link's frames (nil: not authenticated); an
	// authenticated write goes through batch, its headers and their tags
	// in hdrs, its chunks' tags in tags, sealed by seals (write.go).
	auth   *linkAuth
	tags   []byte
	seals  []seal
	sealed int // seals done
	// The frame of an authenticated Send, as a batch of one.
	oneH [1]transport.Header
	oneP [1][]byte
	// The piece of bufs being tried (write, under wmu): at most
	// writePiece bytes, over the array pieces.
	piece  net.Buffers
	pieces [maxTryIov][]byte
	once   sync.Once
	cause  error  // why the connection was closed, if it broke (broke)
	secret []byte // the link secret of the connection's handshake
	// try writes control frames without waiting (TrySend; nil: none),
	// from cbuf (under wmu).
	try  *tryWriter
	cbuf []byte
	rd   linkRead // who reads it, and how (tcpread.go)
}

// close closes the connection, once.
func (tc *link) close() { tc.broke(nil) }

// broke closes the connection, once, and keeps err as the cause of its
// end (the first: a goroutine that then meets the closed connection
// reports the cause, not the close).
func (tc *link) broke(err error) {
	tc.once.Do(func() {
		tc.cause = err
		tc.c.Close()
		close(tc.rd.dead)
	})
}

// attach makes c the link to rank r, whose handshake gave the link
// secret, and starts reading frames from it; auth: authenticated frames.
func (t *tx) attach(r int, c net.Conn, secret []byte, auth bool) {
	if tc, ok := c.(*net.TCPConn); ok {
		// Room for a few frames in flight each way (the kernel caps it).
		tc.SetReadBuffer(sockBuf)
		tc.SetWriteBuffer(sockBuf)
		if cc := congestion(&t.cfg, c.LocalAddr(), c.RemoteAddr()); cc != "" {
			setCongestion(tc, cc) // checked by Connect if chosen; Reno is every process's to choose
		}
	}
	pr := newPollReader(c)
	tc := &link{c: c, r: pr, br: bufio.NewReaderSize(pr, headerBuf), secret: secret, try: newTryWriter(c)}
	if auth {
		tc.auth = newLinkAuth(secret, t.cfg.Rank, r)
	}
	tc.rd.lazyCtx = setPark(pr, tc.armCtx)
	tc.initRead(r)
	t.mu.Lock()
	t.conns[r] = tc
	t.mu.Unlock()
	t.wg.Go(func() { t.readLoop(r, tc) })
}

// LinkSecret returns the secret of the link to peer (LinkKey).
func (t *tx) LinkSecret(peer int) ([]byte, error) {
	if tc := t.conn(peer); tc != nil {
		return tc.secret, nil
	}
	return nil, &channel.PeerError{Rank: peer, Err: errors.New("no connection")}
}

func (t *tx) conn(r int) *link {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.conns[r]
}

// fail closes the link to r and tells the engine why: the first cause
// of its end, whoever meets it.
func (t *tx) fail(r int, tc *link, err error) {
	tc.broke(err)
	if tc.cause != nil { // set within once, before broke returns
		err = tc.cause
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("connection closed")
	}
	t.f.Lost(r, err)
}

func (t *tx) Abort(peer int, err error) {
	if tc := t.conn(peer); tc != nil {
		t.fail(peer, tc, err)
	}
}

func (t *tx) Close() error {
	if t.closed.CompareAndSwap(false, true) {
		ranksHere.Add(-1)
	}
	t.mu.Lock()
	conns := append([]*link(nil), t.conns...)
	t.mu.Unlock()
	// A frame that TrySend wrote only part of is finished by a goroutine
	// holding the link's writer, and its sender was told it went (an
	// Isend whose Wait has returned): it is let finish, for a while,
	// before the link closes under it.
	deadline := time.Now().Add(closeFlush)
	for _, tc := range conns {
		if tc == nil {
			continue
		}
		for tc.finishing.Load() && time.Now().Before(deadline) {
			time.Sleep(50 * time.Microsecond)
		}
		tc.close()
	}
	t.wg.Wait()
	return nil
}

// closeFlush bounds how long Close waits for frames that are partly
// written (TrySend) to finish.
const closeFlush = time.Second

// The capabilities the engine finds on TCP (package transport).
var (
	_ transport.Progresser   = (*tx)(nil)
	_ transport.BatchSender  = (*tx)(nil)
	_ transport.TrySender    = (*tx)(nil)
	_ transport.Piecer       = (*tx)(nil)
	_ transport.LinkSecreter = (*tx)(nil)
)
