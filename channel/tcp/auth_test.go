package tcp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/transport"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// params returns gopter's parameters for n successful tests (fewer with
// -short), from a fixed seed.
func params(n int) *gopter.TestParameters {
	p := gopter.DefaultTestParametersWithSeed(1)
	p.MinSuccessfulTests = n
	if testing.Short() {
		p.MinSuccessfulTests = max(n/5, 5)
	}
	p.MaxDiscardRatio = 20 // the generators filter (SuchThat): few runs, few successes
	return p
}

// TestAuthChoice: what each end states (authOpts) for where its peer is,
// and how two ends settle (agree): the same answer from either end, an
// end told wins over one left to choose, two told opposite things fail.
func TestAuthChoice(t *testing.T) {
	addr := func(s string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(s), Port: 1} }
	for _, c := range []struct {
		auth          Auth
		local, remote string
		want          byte
	}{
		{AuthAuto, "127.0.0.1", "127.0.0.1", 0},
		{AuthAuto, "127.0.0.1", "127.0.0.2", 0}, // both loopback
		{AuthAuto, "::1", "::1", 0},
		{AuthAuto, "10.0.0.5", "10.0.0.5", 0}, // one host's own address
		{AuthAuto, "10.0.0.5", "10.0.0.6", wire.OptAuth},
		{AuthAuto, "127.0.0.1", "10.0.0.6", wire.OptAuth},
		{AuthOn, "127.0.0.1", "127.0.0.1", wire.OptAuth | wire.OptAuthSaid},
		{AuthOff, "10.0.0.5", "10.0.0.6", wire.OptAuthSaid},
	} {
		cfg := Config{Auth: c.auth}
		if got := cfg.authOpts(addr(c.local), addr(c.remote)); got != c.want {
			t.Errorf("Auth %v, %s to %s: options %#x, want %#x", c.auth, c.local, c.remote, got, c.want)
		}
	}
	// A link whose addresses are not TCP's (a Dial hook's own conn): Auto
	// cannot tell it stays on one host, and authenticates.
	if got := (&Config{}).authOpts(&net.UnixAddr{Name: "a"}, &net.UnixAddr{Name: "b"}); got != wire.OptAuth {
		t.Errorf("a Unix link: %#x, want %#x", got, wire.OptAuth)
	}

	const (
		off     = 0
		on      = wire.OptAuth
		saidOff = wire.OptAuthSaid
		saidOn  = wire.OptAuth | wire.OptAuthSaid
	)
	for _, c := range []struct {
		a, b     byte
		want     bool
		mismatch bool
	}{
		{off, off, false, false},
		{on, off, true, false}, // Auto on one side: the safer choice
		{on, on, true, false},
		{saidOff, on, false, false}, // told beats left to choose
		{saidOn, off, true, false},
		{saidOn, saidOn, true, false},
		{saidOff, saidOff, false, false},
		{saidOn, saidOff, false, true},
	} {
		for _, ends := range [][2]byte{{c.a, c.b}, {c.b, c.a}} {
			got, err := agree(ends[0], ends[1])
			if c.mismatch {
				if !errors.Is(err, ErrAuthMismatch) {
					t.Errorf("agree(%#x, %#x): %v %v, want ErrAuthMismatch", ends[0], ends[1], got, err)
				}
			} else if err != nil || got != c.want {
				t.Errorf("agree(%#x, %#x): %v %v, want %v", ends[0], ends[1], got, err, c.want)
			}
		}
	}
	for _, a := range []Auth{AuthAuto, AuthOn, AuthOff} {
		if got, err := ParseAuth(a.String()); err != nil || got != a {
			t.Errorf("ParseAuth(%q): %v %v", a.String(), got, err)
		}
	}
	if _, err := ParseAuth("yes"); err == nil {
		t.Error(`ParseAuth("yes"): no error`)
	}
}

// seemConn is a connection whose remote address seems to be another
// host's: Auto then authenticates its link.
type seemConn struct {
	net.Conn
	remote net.Addr
}

func (c seemConn) RemoteAddr() net.Addr { return c.remote }

var elsewhere = &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 4000} // TEST-NET-1

// seemListener's connections seem to come from another host.
type seemListener struct{ net.Listener }

func (l seemListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return seemConn{c, elsewhere}, nil
}

// seemDial dials addr, and the connection seems to reach another host.
func seemDial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return seemConn{c, elsewhere}, nil
}

// connectEach forms a job of len(cfgs) ranks on loopback, each with its
// own settings (Rank, Size, Root, Secret and rank 0's Listener are set
// here), within d; its endpoints close when the test ends.
func connectEach(t *testing.T, d time.Duration, cfgs []Config, ln net.Listener) ([]*channel.Endpoint, []*tx, []error) {
	t.Helper()
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	n := len(cfgs)
	eps, txs, errs := make([]*channel.Endpoint, n), make([]*tx, n), make([]error, n)
	var wg sync.WaitGroup
	for r, cfg := range cfgs {
		cfg.Rank, cfg.Size, cfg.Root, cfg.Secret = r, n, ln.Addr().String(), []byte("auth")
		if r == 0 {
			cfg.Listener = ln
		}
		wg.Go(func() { eps[r], txs[r], errs[r] = connect(ctx, cfg) })
	}
	wg.Wait()
	for _, ep := range eps {
		if ep != nil {
			t.Cleanup(func() { ep.Close() })
		}
	}
	return eps, txs, errs
}

// TestAuthAgree: the two ends of every link settle the same way — Auto
// authenticates a link that either end sees reach another host, an end
// told beats one left to choose — and frames then cross; two ends told
// opposite things never form a link, and the rank that learns it last
// says why too.
func TestAuthAgree(t *testing.T) {
	for _, c := range []struct {
		name       string
		a0, a1     Auth
		far0, far1 bool // the rank sees its peer on another host
		want       bool
	}{
		{"auto on one host", AuthAuto, AuthAuto, false, false, false},
		{"auto, rank 1 sees another host", AuthAuto, AuthAuto, false, true, true},
		{"auto, rank 0 sees another host", AuthAuto, AuthAuto, true, false, true},
		{"auto between hosts", AuthAuto, AuthAuto, true, true, true},
		{"on and auto", AuthOn, AuthAuto, false, false, true},
		{"auto and on", AuthAuto, AuthOn, false, false, true},
		{"off and auto between hosts", AuthOff, AuthAuto, true, true, false},
		{"on and on", AuthOn, AuthOn, false, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			cfgs := []Config{{Auth: c.a0}, {Auth: c.a1}}
			var root net.Listener = ln
			if c.far0 {
				root = seemListener{ln}
			}
			if c.far1 {
				cfgs[1].Dial = seemDial
			}
			eps, txs, errs := connectEach(t, 20*time.Second, cfgs, root)
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			for r, x := range txs {
				if got := x.conn(1-r).auth != nil; got != c.want {
					t.Errorf("rank %d's link authenticated: %v, want %v", r, got, c.want)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			msg := pattern(100_000, 1)
			go eps[0].Send(ctx, 1, 1, msg)
			buf := make([]byte, len(msg))
			if _, err := eps[1].Recv(ctx, 0, 1, buf); err != nil || !bytes.Equal(buf, msg) {
				t.Fatalf("a message over the link: %v", err)
			}
		})
	}

	_, _, errs := connectEach(t, time.Second, []Config{{Auth: AuthOn}, {Auth: AuthOff}}, nil)
	if !errors.Is(errs[1], ErrAuthMismatch) {
		t.Errorf("rank 1, told off where rank 0 was told on: %v", errs[1])
	}
	if !errors.Is(errs[0], ErrAuthMismatch) || !errors.Is(errs[0], context.DeadlineExceeded) {
		t.Errorf("rank 0, told on where rank 1 was told off: %v", errs[0])
	}
}

// mitm stands between the two ranks of a job on real sockets (rank 1's
// Dial: every byte between them goes through it). It passes what they
// say until armed; then it hands each frame from rank 0 to rank 1 to its
// function, which says what to pass on instead.
type mitm struct {
	auth  bool // the link's frames are authenticated (their sizes)
	mu    sync.Mutex
	fn    func(i int, f []byte) [][]byte
	conns []net.Conn
	wg    sync.WaitGroup
}

func (m *mitm) arm(fn func(i int, f []byte) [][]byte) {
	m.mu.Lock()
	m.fn = fn
	m.mu.Unlock()
}

func (m *mitm) armed() func(i int, f []byte) [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fn
}

func (m *mitm) dial(ctx context.Context, addr string) (net.Conn, error) {
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
	m.mu.Lock()
	m.conns = append(m.conns, up, mid, down)
	m.mu.Unlock()
	m.wg.Go(func() {
		io.Copy(up, mid) // rank 1 to rank 0: as it comes
		up.Close()
	})
	m.wg.Go(func() {
		m.pump(up, mid)
		mid.Close()
	})
	return down, nil
}

// frameLen returns the bytes on the wire of the frame whose header
// starts b (at least a header's bytes).
func (m *mitm) frameLen(b []byte) int {
	plen := int(binary.LittleEndian.Uint32(b[4:]))
	if !m.auth {
		return transport.HeaderSize + plen
	}
	return transport.HeaderSize + tagSize + plen + chunks(plen)*tagSize
}

// pump passes rank 0's bytes to rank 1: as they come until armed, then
// frame by frame through the function.
func (m *mitm) pump(from, to net.Conn) {
	buf := make([]byte, 256<<10)
	var pending []byte
	i := 0
	for {
		n, err := from.Read(buf)
		if n > 0 {
			fn := m.armed()
			if fn == nil && len(pending) == 0 {
				if _, err := to.Write(buf[:n]); err != nil {
					return
				}
			} else {
				pending = append(pending, buf[:n]...)
				for len(pending) >= transport.HeaderSize && len(pending) >= m.frameLen(pending) {
					k := m.frameLen(pending)
					f := slices.Clone(pending[:k])
					pending = pending[k:]
					for _, out := range fn(i, f) {
						if _, err := to.Write(out); err != nil {
							return
						}
					}
					i++
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func (m *mitm) close() {
	m.mu.Lock()
	for _, c := range m.conns {
		c.Close()
	}
	m.mu.Unlock()
	m.wg.Wait()
}

// tagOf returns the tag in a frame's header.
func tagOf(f []byte) int { return int(binary.LittleEndian.Uint64(f[16:])) }

// overMITM starts two ranks whose link goes through a mitm, with auth.
func overMITM(t *testing.T, auth Auth) ([]*channel.Endpoint, *mitm) {
	t.Helper()
	m := &mitm{auth: auth == AuthOn}
	eps, _, err := startTxs(2, Config{Auth: auth, Dial: m.dial})
	if err != nil {
		t.Fatal(err)
	}
	return eps, m
}

// sendTagged sends rank 0's messages to rank 1, message i under tag
// i+1, then a trailer (so that there is always a frame after the last
// one touched), and has rank 1 receive them in order: for each, nil and
// the bytes sent, or the receive's error (and none after).
func sendTagged(t *testing.T, eps []*channel.Endpoint, msgs [][]byte) []error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for i, msg := range msgs {
			if eps[0].Send(ctx, 1, i+1, msg) != nil {
				return
			}
		}
		eps[0].Send(ctx, 1, len(msgs)+1, []byte("trailer"))
	}()
	errs := make([]error, len(msgs)+1)
	for i := range errs {
		want := []byte("trailer")
		if i < len(msgs) {
			want = msgs[i]
		}
		buf := make([]byte, len(want))
		_, err := eps[1].Recv(ctx, 0, i+1, buf)
		if err == nil && !bytes.Equal(buf, want) {
			err = fmt.Errorf("message %d: other bytes than were sent", i)
		}
		errs[i] = err
		if err != nil {
			for j := i + 1; j < len(errs); j++ {
				errs[j] = err
			}
			break
		}
	}
	return errs
}

// msgSizes generates 1 to 3 messages of sizes that cover a header alone,
// a few bytes, less and more than a chunk, and more than a frame.
func msgSizes() gopter.Gen {
	return gen.SliceOfN(3, gen.OneGenOf(
		gen.Const(0), gen.IntRange(1, 200), gen.IntRange(authChunk-10, authChunk+10),
		gen.IntRange(1000, 3*authChunk), gen.IntRange(wire.MaxFrame-5, wire.MaxFrame+authChunk+5),
	)).SuchThat(func(v []int) bool { return len(v) > 0 })
}

// frameTags returns the tag of each frame of messages of these sizes,
// as sendTagged sends them (a message framed in MaxFrame bytes), and of
// the trailer's.
func frameTags(sizes []int) []int {
	var tags []int
	for i, s := range sizes {
		for range max(1, (s+wire.MaxFrame-1)/wire.MaxFrame) {
			tags = append(tags, i+1)
		}
	}
	return append(tags, len(sizes)+1)
}

// checkCaught: receives of messages before tag first (1-based) return
// what was sent; that of first and every one after fail with ErrTampered
// (the link lost).
func checkCaught(t *testing.T, errs []error, first int) bool {
	for i, err := range errs {
		switch {
		case i+1 < first && err != nil:
			t.Logf("message %d, before the frame touched: %v", i+1, err)
			return false
		case i+1 >= first && !errors.Is(err, ErrTampered):
			t.Logf("message %d, at or after the frame touched: %v, want ErrTampered", i+1, err)
			return false
		case i+1 >= first && !errors.Is(err, channel.ErrPeerLost):
			t.Logf("message %d: %v does not say the peer is lost", i+1, err)
			return false
		}
	}
	return true
}

// TestAuthCatchesFlips: on an authenticated link, a bit flipped anywhere
// in a frame — header, header tag, payload, a chunk's tag — by a relay
// on real sockets fails that frame, whatever the sizes: the receives
// before it return the bytes sent, its own fails with ErrTampered (the
// link is dropped), and none after succeeds.
func TestAuthCatchesFlips(t *testing.T) {
	props := gopter.NewProperties(params(40))
	props.Property("a flipped bit fails its frame", prop.ForAll(func(sizes []int, frame, at uint32, bit uint8) bool {
		eps, m := overMITM(t, AuthOn)
		defer m.close()
		defer closeAll(eps)
		msgs := make([][]byte, len(sizes))
		for i, s := range sizes {
			msgs[i] = pattern(s, uint64(i))
		}
		tags := frameTags(sizes)
		target := int(frame % uint32(len(tags)-1))
		var seen atomic.Bool
		m.arm(func(i int, f []byte) [][]byte {
			if i == target {
				seen.Store(tagOf(f) == tags[i])
				f[int(at%uint32(len(f)))] ^= 1 << (bit % 8)
			}
			return [][]byte{f}
		})
		errs := sendTagged(t, eps, msgs)
		if !seen.Load() {
			t.Logf("frame %d (tag %d) never came", target, tags[target])
			return false
		}
		return checkCaught(t, errs, tags[target])
	}, msgSizes(), gen.UInt32(), gen.UInt32(), gen.UInt8()))
	props.TestingRun(t)
}

// The relay's ways to put a frame out of place (TestAuthCatchesDropReplayReorder).
const (
	opDrop   = iota // frame target never passes
	opTwice         // frame target passes twice
	opSwap          // frames target and target+1 pass in the other order
	opReplay        // frame target passes again in place of frame target+1
	numOps          // how many
)

// TestAuthCatchesDropReplayReorder: a frame dropped, sent twice, sent
// again later in place of another, or two frames swapped by a relay
// fails at the first frame out of place: the receives before its message
// return the bytes sent, the rest fail with ErrTampered.
func TestAuthCatchesDropReplayReorder(t *testing.T) {
	props := gopter.NewProperties(params(40))
	props.Property("a frame out of place fails", prop.ForAll(func(sizes []int, frame uint32, op int) bool {
		eps, m := overMITM(t, AuthOn)
		defer m.close()
		defer closeAll(eps)
		msgs := make([][]byte, len(sizes))
		for i, s := range sizes {
			msgs[i] = pattern(s, uint64(i))
		}
		tags := frameTags(sizes)
		target := int(frame % uint32(len(tags)-1)) // there is always a frame after
		first := tags[target]                      // the message of the first frame out of place
		if op == opTwice || op == opReplay {
			first = tags[target+1]
		}
		var seen atomic.Bool
		var held []byte
		m.arm(func(i int, f []byte) [][]byte {
			if i == target {
				seen.Store(tagOf(f) == tags[i])
			}
			switch {
			case op == opDrop && i == target:
				return nil
			case op == opTwice && i == target:
				return [][]byte{f, slices.Clone(f)}
			case op == opSwap && i == target:
				held = f
				return nil
			case op == opSwap && i == target+1:
				return [][]byte{f, held}
			case op == opReplay && i == target:
				held = slices.Clone(f)
			case op == opReplay && i == target+1:
				return [][]byte{held, f}
			}
			return [][]byte{f}
		})
		errs := sendTagged(t, eps, msgs)
		if !seen.Load() {
			t.Logf("frame %d (tag %d) never came", target, tags[target])
			return false
		}
		return checkCaught(t, errs, first)
	}, msgSizes(), gen.UInt32(), gen.IntRange(0, numOps-1)))
	props.TestingRun(t)
}

// TestNoAuthMissesFlips is the control: the same relay flipping a bit of
// a payload on a link that is not authenticated goes unseen by the
// transport, and the receive returns other bytes than were sent (which
// the protection layers, not this package, would catch).
func TestNoAuthMissesFlips(t *testing.T) {
	eps, m := overMITM(t, AuthOff)
	defer m.close()
	defer closeAll(eps)
	m.arm(func(i int, f []byte) [][]byte {
		if i == 0 {
			f[transport.HeaderSize+100] ^= 4
		}
		return [][]byte{f}
	})
	errs := sendTagged(t, eps, [][]byte{pattern(1000, 1)})
	if errs[0] == nil || errors.Is(errs[0], channel.ErrPeerLost) {
		t.Fatalf("a flipped payload bit without authentication: %v, want other bytes than were sent", errs[0])
	}
}

// authStream returns frame h with payload p as an authenticated link
// from rank 0 to rank 1 of link secret secret writes it.
func authStream(secret []byte, h transport.Header, p []byte) []byte {
	w := &link{auth: newLinkAuth(secret, 0, 1)}
	w.authFrames([]transport.Header{h}, [][]byte{p})
	w.sealTo(math.MaxInt)
	var b []byte
	for _, x := range w.bufs {
		b = append(b, x...)
	}
	return b
}

// TestAuthFillPieces: a frame's payload checks out whichever pieces the
// engine reads it in — consecutive pieces of one buffer (checked where
// they lie), pieces of buffers of their own, or one scratch buffer read
// into again and again (copied aside first: the bytes read before are
// overwritten) — and a bit flipped anywhere in the frame fails it with
// ErrTampered, whatever the pieces.
func TestAuthFillPieces(t *testing.T) {
	secret := []byte("link secret, 32 bytes of it.....")
	props := gopter.NewProperties(params(300))
	props.Property("pieces of any kind check out; a flip fails", prop.ForAll(func(plen int, cuts []int, mode int, flip int) bool {
		payload := pattern(plen, uint64(plen))
		h := transport.Header{Kind: wire.KindMsg, Plen: plen, Tag: 1, ID: 1, Total: int64(plen)}
		stream := authStream(secret, h, payload)
		flipped := flip >= 0
		if flipped {
			stream[flip%len(stream)] ^= 1 << (flip % 8)
		}
		r := &link{auth: newLinkAuth(secret, 1, 0)}
		src := bytes.NewReader(stream)
		r.rd.plain = func(b []byte) error { _, err := io.ReadFull(src, b); return err }
		r.rd.ar = &authRead{in: r.auth.in, peer: 0}
		ar := r.rd.ar
		var hb [transport.HeaderSize + tagSize]byte
		io.ReadFull(src, hb[:])
		err := ar.header(hb[:])
		var got []byte
		if err == nil {
			hh, perr := transport.ParseHeader(hb[:transport.HeaderSize])
			if perr != nil {
				t.Logf("the header parses not: %v", perr)
				return false
			}
			ar.begin(hh.Plen)
			dst := make([]byte, plen)
			scratch := make([]byte, 4096)
			for off, k := 0, 0; off < plen && err == nil; k++ {
				n := min(plen-off, 1+cuts[k%len(cuts)])
				var piece []byte
				switch mode {
				case 0: // consecutive pieces of one buffer
					piece = dst[off : off+n]
				case 1: // a buffer of its own each
					piece = make([]byte, n)
				default: // one scratch buffer, read into again
					n = min(n, len(scratch))
					piece = scratch[:n]
				}
				if err = r.authFill(piece); err == nil {
					got = append(got, piece...)
				}
				off += n
			}
			if err == nil {
				err = ar.end()
			}
		}
		if flipped {
			if !errors.Is(err, ErrTampered) {
				t.Logf("a flip at %d of %d: %v", flip%len(stream), len(stream), err)
				return false
			}
			return true
		}
		if err != nil || !bytes.Equal(got, payload) {
			t.Logf("%d bytes in mode %d: %v", plen, mode, err)
			return false
		}
		return true
	},
		gen.OneGenOf(gen.Const(0), gen.IntRange(1, 100), gen.IntRange(authChunk-3, authChunk+3), gen.IntRange(1, wire.MaxFrame)),
		gen.SliceOfN(4, gen.OneGenOf(gen.IntRange(0, 100), gen.IntRange(4000, 70000), gen.IntRange(0, 300000))).SuchThat(func(v []int) bool { return len(v) > 0 }),
		gen.IntRange(0, 2),
		gen.OneGenOf(gen.Const(-1), gen.IntRange(0, 1<<30)),
	))
	props.TestingRun(t)
}
