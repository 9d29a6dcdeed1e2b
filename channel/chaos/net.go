package chaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/tcp"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// injector decides which frames the schedule's faults hit, for both
// networks: the Nth frame of a class on a link.
type injector struct {
	mu     sync.Mutex
	faults []Fault
	seen   map[[3]int]int      // (src, dst, control) → frames so far
	hits   map[int]*[kinds]int // by sending rank
	// openers says whether drops and reorders may hit the frame that
	// opens a message (they do unless -chaos.openers=false): a lost opener
	// comes again after later messages, and the channel must still match
	// them in the order sent (channel/order.go).
	openers bool
}

func newInjector(f []Fault) *injector {
	return &injector{faults: f, seen: map[[3]int]int{}, hits: map[int]*[kinds]int{}}
}

func isControl(h channel.Header) bool {
	return h.Kind != wire.KindMsg && h.Kind != wire.KindData && h.Kind != wire.KindRepair
}

// decide returns the faults that hit this frame from src to dst.
func (in *injector) decide(src, dst int, h channel.Header) []Kind {
	c := 0
	if isControl(h) {
		c = 1
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	k := [3]int{src, dst, c}
	n := in.seen[k]
	in.seen[k] = n + 1
	var out []Kind
	for _, f := range in.faults {
		if (f.Kind == Drop || f.Kind == Reorder) && h.Kind == wire.KindMsg && !in.openers {
			continue
		}
		if f.Src == src && f.Dst == dst && f.Control == (c == 1) && f.Nth == n {
			out = append(out, f.Kind)
			if in.hits[src] == nil {
				in.hits[src] = new([kinds]int)
			}
			in.hits[src][f.Kind]++
		}
	}
	return out
}

// injected returns the faults that hit a frame rank src sent, by kind.
func (in *injector) injected(src int) [kinds]int {
	in.mu.Lock()
	defer in.mu.Unlock()
	if h := in.hits[src]; h != nil {
		return *h
	}
	return [kinds]int{}
}

func flipBit(p []byte, seed int) []byte {
	if len(p) == 0 {
		return p
	}
	c := bytes.Clone(p)
	i := seed % (8 * len(c))
	c[i/8] ^= 1 << (i % 8)
	return c
}

// inNet is an in-process network of faulty links, a transport written on
// the exported boundary: each link delivers its frames in order, one at
// a time, and a frame the engine refuses breaks the link for both ends,
// as TCP's would.
type inNet struct {
	in     *injector
	frames []channel.Frames
	mu     sync.Mutex
	links  map[[2]int]*link
}

type link struct {
	mu     sync.Mutex // held while a frame is delivered: the link's order
	held   *frame     // a frame waiting for the next one (Reorder)
	broken atomic.Pointer[error]
}

// brokenBy returns why the link broke, or nil.
func (l *link) brokenBy() error {
	if p := l.broken.Load(); p != nil {
		return *p
	}
	return nil
}

type frame struct {
	h channel.Header
	p []byte
}

type inTx struct {
	net  *inNet
	rank int
}

func (n *inNet) link(src, dst int) *link {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := n.links[[2]int{src, dst}]
	if l == nil {
		l = &link{}
		n.links[[2]int{src, dst}] = l
	}
	return l
}

func (t *inTx) Send(ctx context.Context, dst int, h channel.Header, p []byte) error {
	n, src := t.net, t.rank
	faults := n.in.decide(src, dst, h)
	l := n.link(src, dst)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.brokenBy(); err != nil {
		return &channel.PeerError{Rank: dst, Err: err}
	}
	out, err := l.shape(ctx, faults, h, p)
	if errors.Is(err, errHeader) {
		return n.breakLink(src, dst, err)
	} else if err != nil {
		return err
	}
	for _, f := range out {
		if err := n.deliver(src, dst, f); err != nil {
			return err
		}
	}
	return nil
}

// errHeader is a flip that hit a frame without payload: its header
// arrives corrupted, which breaks the link.
var errHeader = errors.New("frame header corrupted (its check failed)")

// shape returns the frames that go in place of frame (h, p) on link l
// once faults hit it, in order: the frame damaged, lost, doubled or held
// back, and after it the frame an earlier Reorder held. The caller holds
// l.mu. A Delay stalls here (ctx's error if it ends first).
func (l *link) shape(ctx context.Context, faults []Kind, h channel.Header, p []byte) ([]frame, error) {
	out := []frame{{h, p}}
	justHeld := false
	for _, k := range faults {
		switch k {
		case Flip:
			if len(out) == 0 {
				continue
			}
			if len(p) == 0 {
				return nil, errHeader
			}
			out[0].p = flipBit(out[0].p, int(h.ID)+h.Plen)
		case Drop:
			out = nil
		case Truncate:
			if len(out) > 0 && h.Plen > 0 {
				out[0].p = out[0].p[:h.Plen/2]
			}
		case Duplicate:
			out = append(out, out...)
		case Delay:
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case Reorder:
			if len(out) > 0 && l.held == nil {
				l.held = &frame{h, bytes.Clone(out[0].p)}
				out, justHeld = out[1:], true
			}
		}
	}
	if l.held != nil && !justHeld { // the held frame goes after this one
		out = append(out, *l.held)
		l.held = nil
	}
	return out, nil
}

func (n *inNet) deliver(src, dst int, f frame) error {
	p := f.p
	err := n.frames[dst].Deliver(src, f.h, func(b []byte) error {
		if len(p) < len(b) {
			return fmt.Errorf("%w: a frame shorter than its header says", channel.ErrProtocol)
		}
		p = p[copy(b, p):]
		return nil
	})
	if err != nil {
		return n.breakLink(src, dst, err)
	}
	return nil
}

// breakLink breaks the link both ways and tells both ends. It takes no
// link's lock: it runs under the lock of the link it found broken, and
// two of them, breaking the two directions at once and each waiting for
// the other's lock, hung the campaign (CI, once in a thousand schedules).
func (n *inNet) breakLink(src, dst int, err error) error {
	n.link(src, dst).broken.CompareAndSwap(nil, &err)
	n.link(dst, src).broken.CompareAndSwap(nil, &err)
	n.frames[dst].Lost(src, err)
	n.frames[src].Lost(dst, err)
	return &channel.PeerError{Rank: dst, Err: err}
}

func (t *inTx) Abort(peer int, err error) {
	if t.net.link(t.rank, peer).brokenBy() == nil {
		t.net.breakLink(t.rank, peer, err)
	}
}

func (t *inTx) Close() error {
	for r := range t.net.frames {
		if r != t.rank {
			t.Abort(r, channel.ErrClosed)
		}
	}
	return nil
}

// newInProcess returns the p endpoints of an in-process job over faulty
// links, and the links.
func newInProcess(p int, in *injector, opts ...channel.TransportOption) ([]*channel.Endpoint, *inNet, error) {
	n := &inNet{in: in, frames: make([]channel.Frames, p), links: map[[2]int]*link{}}
	eps := make([]*channel.Endpoint, p)
	for r := range p {
		ep, err := channel.NewEndpoint(r, p, func(f channel.Frames) (channel.Transport, error) {
			n.frames[r] = f
			return &inTx{net: n, rank: r}, nil
		}, opts...)
		if err != nil {
			return nil, nil, err
		}
		eps[r] = ep
	}
	return eps, n, nil
}

// proxy stands between the ranks of a TCP job: every connection a rank
// opens (tcp.Config.Dial) goes through a pair of loopback sockets of its
// own, and once the bootstrap has passed, the proxy reads the frames
// each way and damages those the injector picks.
type proxy struct {
	in    *injector
	size  int
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// dialer returns rank src's tcp.Config.Dial.
func (x *proxy) dialer(src int) func(ctx context.Context, addr string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		up, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			up.Close()
			return nil, err
		}
		defer ln.Close()
		down, err := d.DialContext(ctx, "tcp", ln.Addr().String())
		if err != nil {
			up.Close()
			return nil, err
		}
		mid, err := ln.Accept()
		if err != nil {
			up.Close()
			down.Close()
			return nil, err
		}
		x.mu.Lock()
		x.conns = append(x.conns, up, mid)
		x.mu.Unlock()
		toRoot := addr == rootAddr(ctx)
		dst := make(chan int, 1)
		x.wg.Go(func() { x.pump(mid, up, src, dst, toRoot, true) })
		x.wg.Go(func() { x.pump(up, mid, src, dst, toRoot, false) })
		return down, nil
	}
}

type rootKey struct{}

func rootAddr(ctx context.Context) string {
	s, _ := ctx.Value(rootKey{}).(string)
	return s
}

// pump copies one direction of a connection: from the client (the rank
// that dialed, src) to the server if out, else back. It passes the
// handshake and the bootstrap through, learning the server's rank from
// its hello, then frames, each through the injector.
func (x *proxy) pump(from, to net.Conn, client int, server chan int, toRoot, out bool) {
	defer to.Close()
	defer from.Close()
	r := bufio.NewReaderSize(from, 64<<10)
	var dst int
	pass := func(n int) ([]byte, error) {
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		_, err := to.Write(b)
		return b, err
	}
	if out {
		dst = <-server
		if _, err := pass(wire.JoinSize); err != nil {
			return
		}
		if toRoot {
			a, err := wire.ReadAddr(r)
			if err != nil {
				return
			}
			if _, err := to.Write(wire.EncodeAddr(a)); err != nil {
				return
			}
		}
	} else {
		hello, err := pass(wire.HelloSize)
		if err != nil {
			server <- -1
			return
		}
		dst = int(binary.LittleEndian.Uint32(hello[8:]))
		server <- dst
		if _, err := pass(wire.AcceptSize); err != nil {
			return
		}
		if toRoot {
			t, err := wire.ReadTable(r, x.size)
			if err != nil {
				return
			}
			if _, err := to.Write(wire.EncodeTable(t)); err != nil {
				return
			}
		}
	}
	src := client
	if !out {
		src, dst = dst, client
	}
	var held []byte
	hb := make([]byte, channel.HeaderSize)
	justHeld := false
	for {
		if _, err := io.ReadFull(r, hb); err != nil {
			return
		}
		h, err := channel.ParseHeader(hb)
		if err != nil {
			to.Write(hb) // not ours to judge: the rank will
			io.Copy(to, r)
			return
		}
		f := make([]byte, channel.HeaderSize+h.Plen)
		copy(f, hb)
		if _, err := io.ReadFull(r, f[channel.HeaderSize:]); err != nil {
			return
		}
		outs := [][]byte{f}
		justHeld = false
		faults := x.in.decide(src, dst, h)
		for _, k := range faults {
			switch k {
			case Flip:
				if len(outs) == 0 {
					continue
				}
				if h.Plen == 0 {
					outs[0] = flipBit(outs[0][:channel.HeaderSize], int(h.ID))
				} else {
					c := bytes.Clone(f)
					copy(c[channel.HeaderSize:], flipBit(f[channel.HeaderSize:], int(h.ID)+h.Plen))
					outs[0] = c
				}
			case Drop:
				outs = nil
			case Truncate:
				if len(outs) > 0 {
					outs[0] = outs[0][:channel.HeaderSize+h.Plen/2]
				}
			case Duplicate:
				outs = append(outs, outs...)
			case Delay:
				time.Sleep(delay)
			case Reorder:
				if len(outs) > 0 && held == nil {
					held, outs, justHeld = outs[0], outs[1:], true
				}
			}
		}
		if held != nil && !justHeld {
			outs = append(outs, held)
			held = nil
		}
		for _, b := range outs {
			if _, err := to.Write(b); err != nil {
				return
			}
		}
		if slices.Contains(faults, Truncate) {
			// On a byte stream a frame is cut short only where the
			// stream ends: the connection goes with it (the deferred
			// closes), as a real cut would.
			return
		}
	}
}

func (x *proxy) close() {
	x.mu.Lock()
	for _, c := range x.conns {
		c.Close()
	}
	x.mu.Unlock()
	x.wg.Wait()
}

// newTCP returns the p endpoints of a TCP job on loopback whose every
// link goes through a proxy that damages frames, with silent strangers
// at rank 0's door while it forms.
func newTCP(ctx context.Context, p, strangers int, in *injector, opts ...channel.TransportOption) ([]*channel.Endpoint, *proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	x := &proxy{in: in, size: p}
	var silent []net.Conn
	defer func() {
		for _, c := range silent {
			c.Close()
		}
	}()
	for range strangers {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			silent = append(silent, c)
		}
	}
	ctx = context.WithValue(ctx, rootKey{}, ln.Addr().String())
	eps := make([]*channel.Endpoint, p)
	errs := make([]error, p)
	var wg sync.WaitGroup
	for r := range p {
		// Links not authenticated: the proxy damages frames for the
		// protection to catch and repair, where an authenticated link
		// would drop the link at the first.
		cfg := tcp.Config{Rank: r, Size: p, Root: ln.Addr().String(), Secret: []byte("chaos"),
			HandshakeTimeout: 5 * time.Second, Options: opts, Dial: x.dialer(r), Auth: tcp.AuthOff}
		if r == 0 {
			cfg.Listener = ln
		}
		wg.Go(func() { eps[r], errs[r] = tcp.Connect(ctx, cfg) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, ep := range eps {
			if ep != nil {
				ep.Close()
			}
		}
		x.close()
		return nil, nil, err
	}
	return eps, x, nil
}
