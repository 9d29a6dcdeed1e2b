package tcp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/transport"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// FuzzAuthStream fuzzes the read side of an authenticated link (auth.go's
// authRead and authFill, read.go's readFrames) from a peer that knows the
// job's secret: it completes the real handshake and bootstrap with a rank
// of Connect told Auth on, derives the link's keys with newLinkAuth as the
// rank does, and writes the input's frames. fuzz/'s FuzzFrameStream does
// the same on a link that is not authenticated; on an authenticated one
// every input of its would fail its first header's tag, so this target
// tags the frames itself, under keys that are new on every run.
//
// Two modes, by the input's first bit. Tagged, every header and chunk
// carries its right tag under the frame's sequence number, so that what
// lies past the tags is what is fuzzed: header checks, lengths, payloads
// read in pieces of the engine's choosing into its buffers, chunk
// boundaries, frames longer than the engine asks. Raw (authRaw), the
// tags are the input's, and a wrong one the rank reads must fail as
// tampering. An input is laid out as
//
//	flags  buffer  [cut, 3 bytes if authCut]  frame…
//
// and each frame as
//
//	header (64 bytes)  [header tag]  payload (up to authGiven bytes)  [chunk tags]
//
// where the tags, 16 bytes each and one per 64 KiB chunk of the header's
// payload length, are there in raw mode only. A payload has the length
// its header says, the input giving its first bytes and a pattern the
// rest, so that a short input makes frames of many chunks, and frames
// after them. Unless the flags keep them as given, a header's check
// (XXH3 of its first 56 bytes) and its payload check are made right, so
// that the fuzzer gets past them to what a header can say.
//
// The rank must deliver only what was sent before the first tag that
// does not hold (authInput.model), never panic, never hang (every wait
// is under a deadline), never allocate what a header claims
// (authAllocSlack), and drop the link with a *channel.PeerError wrapping
// ErrTampered, a protocol error, or the stream's end. A stream whose
// every tag holds must never fail as tampered: that would be the reader
// computing a tag over other bytes than the writer did
// (TestAuthStreamFraming checks that this target tags frames as
// link.authFrames does). A stream whose first wrong tag the rank
// certainly reads (authModel.mustTamper) must fail as tampered.
func FuzzAuthStream(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		runAuthStream(t, parseAuthInput(b))
	})
}

// The flags of an input (its first byte).
const (
	// authRaw: the tags are the input's (after the header, after each
	// chunk), not computed.
	authRaw = 1 << iota
	// authAbsolute, with authRaw: a tag given is the tag itself. Without
	// it a tag given is its difference (XOR) from the right one: the
	// keys are new on every run, so a stored input can only name a
	// wrong tag, or a right one, that way.
	authAbsolute
	// authKeepCheck: the header's check (bytes 56–63) as given.
	authKeepCheck
	// authKeepSum: the payload check (bytes 48–55) as given.
	authKeepSum
	// authCut: the stream stops after as many bytes as the next 3 bytes
	// say (little-endian), mid-frame or mid-chunk as they fall.
	authCut
	// authFromPeer: the receives name rank 1, and read the link
	// themselves (Progress); else they take AnySource, and the link's
	// own goroutine reads it (readLoop).
	authFromPeer
)

// authBufs are the receive buffers an input's second byte picks from:
// none, a few bytes, either side of a chunk and of a frame. A buffer
// shorter than a message has its payload read through the engine's
// scratch buffer, one piece over another (authRead.collect's aside).
var authBufs = []int{0, 1, 100, 4096, authChunk - 1, authChunk, authChunk + 1, 3*authChunk + 7, wire.MaxFrame, wire.MaxFrame + authChunk}

const (
	// authMaxWire bounds a stream: no frame starts past this many
	// bytes, a few of the largest frames.
	authMaxWire = 4 << 20
	// authGiven is how many of a frame's payload bytes an input gives
	// (the rest is a pattern): enough for any control frame the engine
	// parses, few enough that a frame of many chunks takes little of
	// the input, and the frames after it the rest.
	authGiven = 128
	// authMaxSent bounds the payload sent under one header: past
	// MaxFrame the rank refuses the header before it reads a byte.
	authMaxSent = wire.MaxFrame + authChunk
	// authHeld is the rank's WithHeldLimit: small, so that what the
	// engine may allocate for messages nobody has received yet is small
	// beside what a header can claim.
	authHeld = 4 << 20
	// authAllocSlack is what the rank and this test may allocate, while
	// the rank reads a stream, beyond what the engine may for its bytes:
	// authHeld for messages that have not come whole, twice the stream
	// (buffers that double as bytes come), twice that again to spare,
	// and a frame's payload (a buffer of a frame's length is made before
	// it comes, and the stream may stop within it). A header's claim (a
	// message of up to MaxMessage bytes) is far beyond.
	authAllocSlack = 4 << 20
	// authWait bounds a whole run: a rank that has not dropped the link
	// by then, although the stream has ended, hangs.
	authWait = 10 * time.Second
)

// authInput is an input, decoded.
type authInput struct {
	flags  byte
	bufLen int // the receive buffer's length
	cut    int // the stream's bytes sent: -1, all
	frames []authFrame
}

// authFrame is one frame of an input: its header as it goes on the wire,
// its payload, and in raw mode the tags given (for the header, then for
// each chunk).
type authFrame struct {
	hdr     [transport.HeaderSize]byte
	payload []byte
	given   [][tagSize]byte
}

// parseAuthInput decodes an input; every input decodes.
func parseAuthInput(b []byte) authInput {
	in := authInput{cut: -1}
	take := func(n int) []byte {
		p := b[:min(n, len(b))]
		b = b[len(p):]
		return p
	}
	if f := take(1); len(f) == 1 {
		in.flags = f[0]
	}
	in.bufLen = authBufs[0]
	if p := take(1); len(p) == 1 {
		in.bufLen = authBufs[int(p[0])%len(authBufs)]
	}
	if in.flags&authCut != 0 {
		var c [4]byte
		copy(c[:], take(3))
		in.cut = int(binary.LittleEndian.Uint32(c[:]))
	}
	raw := in.flags&authRaw != 0
	tag := func() (t [tagSize]byte) {
		copy(t[:], take(tagSize)) // zeros where the input ends: in difference, the right tag
		return t
	}
	wireLen := 0
	for len(b) >= transport.HeaderSize && wireLen < authMaxWire {
		var fr authFrame
		copy(fr.hdr[:], take(transport.HeaderSize))
		n := int(min(binary.LittleEndian.Uint32(fr.hdr[4:]), authMaxSent))
		if raw {
			fr.given = append(fr.given, tag())
		}
		fr.payload = make([]byte, n)
		for i := copy(fr.payload, take(min(n, authGiven))); i < n; i++ {
			fr.payload[i] = byte(i*131 + i>>9 + len(in.frames))
		}
		if raw {
			for range chunks(n) {
				fr.given = append(fr.given, tag())
			}
		}
		if in.flags&authKeepSum == 0 {
			binary.LittleEndian.PutUint64(fr.hdr[48:], xxh3.Hash(fr.payload))
		}
		if in.flags&authKeepCheck == 0 {
			binary.LittleEndian.PutUint64(fr.hdr[56:], xxh3.Hash(fr.hdr[:56]))
		}
		in.frames = append(in.frames, fr)
		wireLen += transport.HeaderSize + tagSize + n + chunks(n)*tagSize
	}
	return in
}

// authUnit is a part of a stream a tag covers: a header or a chunk, its
// tag included.
type authUnit struct {
	frame int
	dom   uint32 // 0: the header; i: chunk i
	end   int    // where its tag ends in the stream
	bad   bool   // its tag does not hold
}

// render returns the stream an input makes under out, the key of the
// direction it is sent in (its sequence numbers counted from out.seq),
// and its units.
func (in *authInput) render(out *gmac) ([]byte, []authUnit) {
	var b []byte
	var units []authUnit
	var right [tagSize]byte
	put := func(fi int, dom uint32, seq uint64, data []byte) {
		b = append(b, data...)
		out.tag(right[:], seq, dom, data)
		t := right
		fr := &in.frames[fi]
		if in.flags&authRaw != 0 {
			g := fr.given[dom]
			if in.flags&authAbsolute != 0 {
				t = g
			} else {
				for i := range t {
					t[i] ^= g[i]
				}
			}
		}
		b = append(b, t[:]...)
		units = append(units, authUnit{frame: fi, dom: dom, end: len(b), bad: t != right})
	}
	for fi := range in.frames {
		fr := &in.frames[fi]
		seq := out.seq
		out.seq++
		put(fi, 0, seq, fr.hdr[:])
		for dom, off := uint32(1), 0; off < len(fr.payload); dom++ {
			k := min(len(fr.payload)-off, authChunk)
			put(fi, dom, seq, fr.payload[off:off+k])
			off += k
		}
	}
	if in.cut >= 0 && in.cut < len(b) {
		b = b[:in.cut]
	}
	return b, units
}

// authModel is what the rank may deliver of a stream, and how it must end.
type authModel struct {
	msgs       []*authMsg
	tampered   bool // a tag in the stream does not hold
	mustTamper bool // and the rank certainly reads it: the link must fail as tampered
}

// authMsg is a message of a stream, as its frames put it together.
type authMsg struct {
	tag   int
	id    uint64
	total int64
	data  []byte // nil: longer than the stream (the rank cannot have received it whole)
	got   int64  // bytes of it in frames whose every tag holds
	used  bool   // delivered
}

// model says what the rank may make of a stream (of n bytes, cut) of an
// input's units.
//
// The rank may deliver a message of context 0 whose every frame lies
// whole in the stream before the first tag that does not hold; and a
// receive whose buffer is too short may fail as truncated as soon as a
// message's opening header is in, and holds (its payload comes, or
// fails, after: bind). A header that does not parse ends what the rank
// can deliver, as a frame the stream cuts or a wrong tag does: the rank
// drops the link there. It may deliver fewer (it refuses a frame the
// engine does not take), never others.
//
// The rank certainly reads the first wrong tag when the stream holds it
// and every frame before it is a whole message (a KindMsg of context 0,
// its whole payload, whose header parses: the engine takes it without
// error), and the wrong tag is the header's (checked before anything
// else) or a chunk's of a frame whose header parses and whose payload
// the engine reads whatever it says: any kind but the data frames
// (KindData, KindRepair), which it may refuse first for belonging to no
// message.
func (in *authInput) model(units []authUnit, n int) authModel {
	var m authModel
	firstBad := len(units)
	for i, u := range units {
		if u.bad {
			firstBad = i
			m.tampered = true
			break
		}
	}
	for i := 0; i < len(units) && i < firstBad && units[i].end <= n; {
		fi := units[i].frame
		last := i // the frame's last unit
		for last+1 < len(units) && units[last+1].frame == fi {
			last++
		}
		h, err := wire.ParseHeader(in.frames[fi].hdr[:])
		if err != nil {
			break
		}
		done := last < firstBad && units[last].end <= n // every tag of the frame in, and holding
		var msg *authMsg
		switch {
		case h.Ctx != 0:
		case h.Kind == wire.KindMsg:
			msg = &authMsg{tag: int(h.Tag), id: h.ID, total: h.Total}
			if h.Total <= int64(n) {
				msg.data = make([]byte, h.Total)
			}
			m.msgs = append(m.msgs, msg)
		case h.Kind == wire.KindData:
			for j := len(m.msgs) - 1; j >= 0; j-- {
				if m.msgs[j].id == h.ID {
					msg = m.msgs[j]
					break
				}
			}
		}
		if done && msg != nil && msg.got == h.Offset && msg.total == h.Total {
			if msg.data != nil {
				copy(msg.data[h.Offset:], in.frames[fi].payload)
			}
			msg.got += int64(h.Plen)
		}
		if !done {
			break
		}
		i = last + 1
	}
	if !m.tampered || units[firstBad].end > n {
		return m
	}
	u := units[firstBad]
	for _, fr := range in.frames[:u.frame] {
		if h, err := wire.ParseHeader(fr.hdr[:]); err != nil || h.Kind != wire.KindMsg || h.Ctx != 0 || int64(h.Plen) != h.Total {
			return m
		}
	}
	if u.dom == 0 {
		m.mustTamper = true
		return m
	}
	h, err := wire.ParseHeader(in.frames[u.frame].hdr[:])
	m.mustTamper = err == nil && h.Kind != wire.KindData && h.Kind != wire.KindRepair
	return m
}

// delivered checks a message the rank delivered (st, and buf's bytes
// unless the receive was truncated) against the model: it must be one
// of the stream's messages, not delivered before.
func (m *authModel) delivered(st channel.Status, buf []byte, truncated bool) error {
	for _, msg := range m.msgs {
		if msg.used || msg.tag != st.Tag || msg.total != int64(st.Len) {
			continue
		}
		if !truncated && (msg.got != msg.total || msg.data == nil || !bytes.Equal(msg.data, buf[:st.Len])) {
			continue
		}
		msg.used = true
		return nil
	}
	if truncated {
		return fmt.Errorf("a receive truncated for a message (tag %d, %d bytes) that opens nowhere in the stream before its first wrong tag", st.Tag, st.Len)
	}
	return fmt.Errorf("delivered a message (tag %d, %d bytes) that the stream holds no whole one like before its first wrong tag", st.Tag, st.Len)
}

// authPeer is the fuzzer's end of a link to a rank: rank 1 of a job of
// two, which knows the job's secret.
type authPeer struct {
	ep  *channel.Endpoint // rank 0
	c   net.Conn          // rank 1's end of the link
	out *gmac             // its frames' key, rank 1 to rank 0: the rank's in
}

// dialAuthPeer starts rank 0 (Connect, Auth on) and joins its job as
// rank 1 through the real handshake and the authenticated bootstrap.
func dialAuthPeer(ctx context.Context, t *testing.T) *authPeer {
	t.Helper()
	secret := []byte("fuzz the authenticated reader")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	type result struct {
		ep  *channel.Endpoint
		err error
	}
	ch := make(chan result, 1)
	go func() {
		ep, err := Connect(ctx, Config{Rank: 0, Size: 2, Listener: ln, Secret: secret, Auth: AuthOn,
			Options: []channel.TransportOption{channel.WithHeldLimit(authHeld)}})
		ch <- result{ep, err}
	}()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fail := func(err error) {
		c.Close()
		if r := <-ch; r.ep != nil {
			r.ep.Close()
		}
		t.Fatal(err)
	}
	dl, _ := ctx.Deadline()
	c.SetDeadline(dl)
	p, err := wire.ClientHandshake(c, wire.JobKey(secret), 1, 2, 0, wire.OptAuth|wire.OptAuthSaid)
	if err != nil {
		fail(err)
	}
	addr := wire.EncodeAddr("127.0.0.1:9") // never dialed: there is no rank 2
	if _, err := c.Write(append(addr, bootTag(p.Link, "addr", 1, 0, addr)...)); err != nil {
		fail(err)
	}
	addrs, err := wire.ReadTable(c, 2)
	if err == nil {
		err = readBootTag(c, p.Link, "table", 0, 1, wire.EncodeTable(addrs))
	}
	if err != nil {
		fail(err)
	}
	r := <-ch
	if r.err != nil {
		c.Close()
		t.Fatal(r.err)
	}
	return &authPeer{ep: r.ep, c: c, out: newLinkAuth(p.Link, 1, 0).out}
}

// runAuthStream sends an input's stream to a rank and checks what the
// rank makes of it.
func runAuthStream(t *testing.T, in authInput) {
	ctx, cancel := context.WithTimeout(context.Background(), authWait)
	defer cancel()
	p := dialAuthPeer(ctx, t)
	var wg sync.WaitGroup
	defer func() {
		p.ep.Close() // first: the goroutines below end when the rank's end is gone
		p.c.Close()
		wg.Wait()
	}()
	stream, units := in.render(p.out)
	model := in.model(units, len(stream))
	buf := make([]byte, in.bufLen)
	src := channel.AnySource
	if in.flags&authFromPeer != 0 {
		src = 1
	}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	wg.Go(func() {
		// All of it, then the end of the stream; the rank may stop
		// reading first (it dropped the link), and the write then fails.
		if _, err := p.c.Write(stream); err == nil {
			p.c.(*net.TCPConn).CloseWrite()
		}
	})
	// What the rank sends back (control frames) is read, so that its
	// writes never wait, and so that closing this end leaves nothing
	// unread, which would reset the connection (RST) and could cost the
	// rank bytes sent before.
	wg.Go(func() { io.Copy(io.Discard, p.c) })

	var lost error
	got := 0
	for lost == nil {
		st, err := p.ep.Recv(ctx, src, channel.AnyTag, buf)
		switch {
		case err == nil || errors.Is(err, channel.ErrTruncated):
			if derr := model.delivered(st, buf, err != nil); derr != nil {
				t.Fatal(derr)
			}
			got++
		case errors.Is(err, channel.ErrCorrupted):
			// A message the stream abandoned (KindAbort): its receive
			// fails, the link stays.
		default:
			lost = err
		}
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc

	t.Logf("a stream of %d bytes in %d frames: %d messages delivered, %d bytes allocated, then %v", len(stream), len(in.frames), got, alloc, lost)
	if errors.Is(lost, context.DeadlineExceeded) {
		t.Fatalf("the rank still holds the link %v after the stream ended (%d bytes): %v", authWait, len(stream), lost)
	}
	why := authLinkEnd(lost)
	switch {
	case why == "":
		t.Fatalf("the link ended with %v, want a *channel.PeerError for rank 1 wrapping ErrTampered, a protocol error or the stream's end", lost)
	case why == "tampered" && !model.tampered:
		t.Fatalf("every tag holds, yet the rank found tampering: %v", lost)
	case why != "tampered" && model.mustTamper:
		t.Fatalf("the rank read a frame whose tag does not hold, and did not fail as tampered: %v", lost)
	}
	if limit := uint64(authHeld + 4*len(stream) + wire.MaxFrame + authAllocSlack); alloc > limit {
		t.Fatalf("%d bytes allocated while the rank read a stream of %d bytes (limit %d): a header's claim?", alloc, len(stream), limit)
	}
}

// authLinkEnd says why the link ended, from the error that ended the
// receives: "tampered", "protocol", "ended" (the stream stopped, at a
// frame's boundary or within one), or "" for anything else.
func authLinkEnd(err error) string {
	pe, ok := errors.AsType[*channel.PeerError](err)
	switch {
	case !ok || pe.Rank != 1:
		return ""
	case errors.Is(err, ErrTampered):
		return "tampered"
	case errors.Is(err, transport.ErrProtocol):
		return "protocol"
	case errors.Is(err, io.ErrUnexpectedEOF) || pe.Err.Error() == "connection closed":
		return "ended"
	}
	return ""
}

// TestAuthStreamFraming: the streams FuzzAuthStream makes are an
// authenticated link's as its writer writes them (link.authFrames), tag
// for tag, for frames of no payload, of less than a chunk, and of
// several chunks with a short last one; so that a tag the rank refuses in
// a stream whose tags are all right is the reader's fault.
func TestAuthStreamFraming(t *testing.T) {
	secret := []byte("link secret, 32 bytes of it.....")
	hs := []transport.Header{
		{Kind: wire.KindMsg, Plen: 5, Tag: 3, ID: 1, Total: 5},
		{Kind: wire.KindMsg, Tag: 4, ID: 2},
		{Kind: wire.KindMsg, Plen: 3*authChunk + 100, Tag: 5, ID: 3, Total: 3*authChunk + 100},
	}
	var in authInput
	in.cut = -1
	var ps [][]byte
	for i, h := range hs {
		p := pattern(h.Plen, uint64(i))
		h.Sum = xxh3.Hash(p)
		var fr authFrame
		h.Put(fr.hdr[:])
		fr.payload = p
		in.frames = append(in.frames, fr)
		hs[i] = h
		ps = append(ps, p)
	}
	got, units := in.render(newLinkAuth(secret, 0, 1).out)
	w := &link{auth: newLinkAuth(secret, 0, 1)}
	w.authFrames(hs, ps)
	w.sealTo(len(got) + 1)
	var want []byte
	for _, x := range w.bufs {
		want = append(want, x...)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the fuzz target's stream (%d bytes) is not the writer's (%d bytes)", len(got), len(want))
	}
	if n := len(hs) + chunks(5) + chunks(3*authChunk+100); len(units) != n {
		t.Fatalf("%d units, want %d", len(units), n)
	}
}

var updateSeeds = flag.Bool("update", false, "rewrite testdata/fuzz/FuzzAuthStream from authSeeds")

// authSeeds are FuzzAuthStream's seed corpus, by file name: streams whose
// tags all hold (a small message; messages of several chunks, into a
// buffer that holds them and into one that does not; a protocol error),
// a chunk's tag and a header's off by one bit, a stream cut within a
// chunk, and tags given outright.
func authSeeds() map[string][]byte {
	// frame is a frame of an input: its header (whose checks the target
	// makes right again, the payload's too), the tags given in raw mode
	// (the header's, then each chunk's), its payload's first bytes.
	frame := func(h wire.Header, tags ...[]byte) []byte {
		b := make([]byte, transport.HeaderSize)
		h.Put(b)
		if len(tags) > 0 {
			b, tags = append(b, tags[0]...), tags[1:]
		}
		b = append(b, pattern(min(h.Plen, authGiven), uint64(h.ID))...)
		for _, t := range tags {
			b = append(b, t...)
		}
		return b
	}
	input := func(flags byte, buf int, frames ...[]byte) []byte {
		i := slices.Index(authBufs, buf)
		if i < 0 {
			panic(buf)
		}
		return slices.Concat(append([][]byte{{flags, byte(i)}}, frames...)...)
	}
	right := make([]byte, tagSize) // in difference: the right tag
	oneBit := make([]byte, tagSize)
	oneBit[7] = 0x10
	const big = 3*authChunk + 100 // four chunks, the last short
	hello := wire.Header{Kind: wire.KindMsg, Plen: 5, Tag: 3, ID: 1, Total: 5}
	bigMsg := wire.Header{Kind: wire.KindMsg, Plen: big, Tag: 4, ID: 2, Total: big}
	// A message of two frames of one chunk each.
	first := wire.Header{Kind: wire.KindMsg, Plen: authChunk, Tag: 5, ID: 3, Total: 2 * authChunk}
	second := wire.Header{Kind: wire.KindData, Plen: authChunk, Tag: 5, ID: 3, Offset: authChunk, Total: 2 * authChunk}
	stray := wire.Header{Kind: wire.KindData, Plen: 1, Tag: 3, ID: 9, Total: 1} // of no message
	cutAt := transport.HeaderSize + tagSize + authChunk + tagSize + 1000        // within the second chunk
	cut := []byte{byte(cutAt), byte(cutAt >> 8), byte(cutAt >> 16)}
	return map[string][]byte{
		"small":        input(0, 100, frame(hello)),
		"chunks":       input(0, wire.MaxFrame, frame(hello), frame(bigMsg), frame(first), frame(second)),
		"chunks-short": input(authFromPeer, 4096, frame(bigMsg), frame(first), frame(second), frame(hello)),
		"protocol":     input(0, 100, frame(hello), frame(stray), frame(hello)),
		"flip-chunk":   input(authRaw, wire.MaxFrame, frame(hello, right, right), frame(bigMsg, right, right, right, oneBit, right)),
		"flip-header":  input(authRaw|authFromPeer, 100, frame(hello, right, right), frame(bigMsg, oneBit, right, right, right, right)),
		"cut-chunk":    input(authCut, wire.MaxFrame, cut, frame(bigMsg)),
		"absolute":     input(authRaw|authAbsolute, 100, frame(hello, right, right)),
	}
}

// TestAuthStreamSeeds: the seed corpus in testdata is authSeeds' (-update
// writes it), and each seed says what its name does: the flips and the
// tags given outright must fail as tampered, the others hold.
func TestAuthStreamSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzAuthStream")
	for name, b := range authSeeds() {
		file := []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b))
		path := filepath.Join(dir, name)
		if *updateSeeds {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, file, 0o644); err != nil {
				t.Fatal(err)
			}
		} else if have, err := os.ReadFile(path); err != nil || !bytes.Equal(have, file) {
			t.Errorf("%s is not authSeeds' %q (go test -run TestAuthStreamSeeds -update): %v", path, name, err)
		}
		in := parseAuthInput(b)
		stream, units := in.render(newGMAC(make([]byte, 32)))
		m := in.model(units, len(stream))
		wantTamper := name == "flip-chunk" || name == "flip-header" || name == "absolute"
		if m.tampered != wantTamper || m.mustTamper != wantTamper {
			t.Errorf("seed %s: tampered %v, must fail as tampered %v; want %v", name, m.tampered, m.mustTamper, wantTamper)
		}
	}
}
