package tcp

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"

	"github.com/sigcheck/sigcheck/channel/transport"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// Authenticated links. Every link is opened by a handshake that proves
// both ends know the job's secret, but the frames that follow carry only
// keyless checks (XXH3): a relay on the path between two hosts could read
// them and rewrite them, checks and all. On an authenticated link every
// frame carries tags that only the two ends can compute, under keys
// derived from the link secret of that connection's handshake, one key
// per direction:
//
//	header  header tag  payload chunk 1  tag 1  …  payload chunk n  tag n
//
// A payload is cut into chunks of authChunk bytes (the last may be
// shorter; a frame without payload has none). Each tag is a GMAC (AES-256
// in GCM with no plaintext) over the header or over one chunk, under a
// nonce made of the frame's sequence number on the link in that direction
// and the chunk's index (the header's is 0). The sequence number is never
// on the wire: both ends count frames. So a frame that is rewritten (a
// bit anywhere: header, payload, tag), replayed, dropped, reordered, or
// taken from another link or another job fails its tag, and the receiver
// drops the link at once with ErrTampered, naming the peer. A relay that
// stops passing frames, or drops the last ones and then nothing more
// comes, is seen as it is without tags: a link that goes quiet (the
// receive waits for its context) or closes (the peer is lost). Nothing
// is encrypted: authentication, not confidentiality (channel/encrypt
// seals blocks for that).
//
// What a receiver does before a tag holds. A header is checked before
// the engine sees it: no frame is matched, opened or acted on unless its
// header is the sender's. Its payload goes where the engine puts it, and
// over TCP that is straight into a posted receive's buffer: the bytes of
// a chunk are there before its tag is checked, and the check comes as
// soon as the chunk is in, before the next chunk is read and before the
// frame is handed back to the engine. A chunk that fails drops the link,
// and the message the frame belongs to is never completed: its receive
// fails with a *channel.PeerError wrapping ErrTampered, and its buffer may
// hold the unauthenticated bytes, as any failed receive's buffer may hold
// part of a message. A receive that returns without error holds only
// bytes whose tags held. Control frames (verdicts, asks) are read whole,
// tags checked, before the engine acts on them.
//
// Why GMAC, and why chunks: it is the fastest MAC in Go's standard library
// where the CPU has AES and carry-less multiplication (AES-NI and
// PCLMULQDQ, ARMv8's AES and PMULL), several times keyed BLAKE3 or
// HMAC-SHA256 (BenchmarkTag); elsewhere Go's GCM is constant-time software,
// much slower, and AuthOff is the choice for links that need no tags.
// GMAC takes its input in one call, so a tag covers a chunk: the sender
// writes each chunk before it computes its tag, which goes with the next
// write (link.pieceLimit), and the receiver computes its own as soon as
// the chunk is in, so that the two ends hash at once and hashing
// overlaps the transfer instead of preceding or following all of it.
// docs/channels.md has what it costs.
//
// Which links: Config.Auth. AuthAuto, the default, authenticates a link
// whose two addresses are on different hosts, and not one within a host
// (both loopback, or one address), whose frames never leave the machine.
// Each end states in its handshake what it wants and whether it was told
// (wire.OptAuth, wire.OptAuthSaid), under the handshake's MACs, so that
// a relay cannot turn authentication off; both ends then settle the same
// way (agree): what an end was told wins over what the other chose by
// itself, and two ends told opposite things fail to connect
// (ErrAuthMismatch).

// Auth says which links of a rank are authenticated, frame by frame.
type Auth int

const (
	// AuthAuto authenticates the links to other hosts, not those within
	// this one.
	AuthAuto Auth = iota
	// AuthOn authenticates every link.
	AuthOn
	// AuthOff authenticates none (the handshake still admits only the
	// job's ranks).
	AuthOff
)

func (a Auth) String() string {
	switch a {
	case AuthAuto:
		return "auto"
	case AuthOn:
		return "on"
	case AuthOff:
		return "off"
	}
	return fmt.Sprintf("Auth(%d)", int(a))
}

// ParseAuth reads an Auth as String writes it ("" is AuthAuto).
func ParseAuth(s string) (Auth, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return AuthAuto, nil
	case "on":
		return AuthOn, nil
	case "off":
		return AuthOff, nil
	}
	return AuthAuto, fmt.Errorf("tcp: authentication %q: want auto, on or off", s)
}

var (
	// ErrTampered: a frame on an authenticated link failed its tag: it
	// was rewritten, replayed, dropped or reordered on the way (or sent
	// by someone without the link's keys). The link is dropped.
	ErrTampered = errors.New("tcp: a frame failed authentication (rewritten, replayed, dropped or reordered on the way)")
	// ErrAuthMismatch: the two ends of a link were told opposite things
	// about authenticating it (Config.Auth on and off).
	ErrAuthMismatch = errors.New("tcp: the two ends of a link disagree on authenticating it")
)

// authOpts returns the options this end states in the handshake of a
// link between local and remote.
func (cfg *Config) authOpts(local, remote net.Addr) byte {
	switch cfg.Auth {
	case AuthOn:
		return wire.OptAuth | wire.OptAuthSaid
	case AuthOff:
		return wire.OptAuthSaid
	}
	if sameHost(local, remote) {
		return 0
	}
	return wire.OptAuth
}

// agree settles whether a link is authenticated from what its two ends
// stated: the same answer whichever end asks.
func agree(mine, theirs byte) (bool, error) {
	mOn, tOn := mine&wire.OptAuth != 0, theirs&wire.OptAuth != 0
	mSaid, tSaid := mine&wire.OptAuthSaid != 0, theirs&wire.OptAuthSaid != 0
	switch {
	case mSaid && tSaid && mOn != tOn:
		return false, ErrAuthMismatch
	case mSaid:
		return mOn, nil
	case tSaid:
		return tOn, nil
	}
	return mOn || tOn, nil
}

// settle is agree for the link to rank peer, with an error that says who
// was told what.
func (t *tx) settle(peer int, mine, theirs byte) (bool, error) {
	on, err := agree(mine, theirs)
	if err != nil {
		word := func(o byte) string {
			if o&wire.OptAuth != 0 {
				return "on"
			}
			return "off"
		}
		err = fmt.Errorf("%w: rank %d has Auth %s, rank %d Auth %s", err, t.cfg.Rank, word(mine), peer, word(theirs))
	}
	return on, err
}

const (
	// tagSize is the size of a tag (GCM's).
	tagSize = 16
	// authChunk is the most payload one tag covers: small enough that
	// the receiver's check of the last chunk, which nothing overlaps,
	// is short, large enough that tags cost little room and few reads.
	authChunk = 64 << 10
	// splitChunk is the smallest chunk whose tag is computed after the
	// chunk is written (pieceLimit).
	splitChunk = 16 << 10
)

// chunks returns how many chunks a payload of n bytes has.
func chunks(n int) int { return (n + authChunk - 1) / authChunk }

// gmac computes a direction's tags.
type gmac struct {
	aead  cipher.AEAD
	nonce [12]byte
	want  [tagSize]byte // check's (a local would escape through the interface: allocate)
	seq   uint64        // the next frame's sequence number in this direction
}

// newGMAC returns the tags of an AES-256 key.
func newGMAC(key []byte) *gmac {
	b, err := aes.NewCipher(key)
	if err != nil {
		panic(err) // only for a key of another length
	}
	a, err := cipher.NewGCM(b)
	if err != nil {
		panic(err) // only for a block size other than AES's
	}
	return &gmac{aead: a}
}

// tag writes into dst (tagSize bytes) the tag of data as part dom (0:
// the header, i: payload chunk i) of frame seq.
func (g *gmac) tag(dst []byte, seq uint64, dom uint32, data []byte) {
	binary.BigEndian.PutUint64(g.nonce[:8], seq)
	binary.BigEndian.PutUint32(g.nonce[8:], dom)
	g.aead.Seal(dst[:0], g.nonce[:], nil, data)
}

// check reports whether tag is the tag of data as part dom of frame seq.
func (g *gmac) check(tag []byte, seq uint64, dom uint32, data []byte) bool {
	g.tag(g.want[:], seq, dom, data)
	return subtle.ConstantTimeCompare(g.want[:], tag) == 1
}

// linkAuth is an authenticated link's two directions: out (under the
// link's wmu) and in (under its read token).
type linkAuth struct {
	out, in *gmac
}

// newLinkAuth derives the keys of the link between ranks me and peer
// from its link secret: one per direction, so that a frame reflected
// back to its sender fails too.
func newLinkAuth(secret []byte, me, peer int) *linkAuth {
	key := func(from, to int) *gmac {
		k, err := wire.LinkKey(secret, fmt.Sprintf("tcp frames %d>%d", from, to), 32)
		if err != nil {
			panic(err) // only for lengths beyond 255 hashes
		}
		return newGMAC(k)
	}
	return &linkAuth{out: key(me, peer), in: key(peer, me)}
}

// The bootstrap messages of an authenticated link (the address a rank
// sends rank 0, the table rank 0 sends back) carry a tag too, under a key
// of their own: else a relay could give a rank another address for a
// peer, and stand between them.

// bootTag returns the tag of bootstrap message b, what ("addr" or
// "table"), from rank from to rank to, on the link of secret secret.
func bootTag(secret []byte, what string, from, to int, b []byte) []byte {
	k, err := wire.LinkKey(secret, "tcp bootstrap", 32)
	if err != nil {
		panic(err) // only for lengths beyond 255 hashes
	}
	m := hmac.New(sha256.New, k)
	m.Write([]byte(what))
	m.Write(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(from)), uint32(to)))
	m.Write(b)
	return m.Sum(nil)[:tagSize]
}

// readBootTag reads the tag that follows bootstrap message b (decoded,
// and encoded again: the encodings are canonical) and checks it.
func readBootTag(r io.Reader, secret []byte, what string, from, to int, b []byte) error {
	var got [tagSize]byte
	if _, err := io.ReadFull(r, got[:]); err != nil {
		return err
	}
	if !hmac.Equal(got[:], bootTag(secret, what, from, to, b)) {
		return fmt.Errorf("%w: the %s from rank %d", ErrTampered, what, from)
	}
	return nil
}

// The write side (under the link's wmu).

// seal is a chunk's tag to compute before the write that carries it
// goes (link.sealTo).
type seal struct {
	off  int    // where the tag is, in bytes from the start of the write
	tag  []byte // its place, in link.tags
	data []byte // the chunk
	seq  uint64 // its frame's sequence number
	dom  uint32 // its index in the frame
}

// authFrames sets tc.bufs to the frames hs and ps as an authenticated
// link carries them: each header tagged now (a header is small), each
// chunk's tag left to the write (sealTo), so that the chunks of a large
// frame are tagged one piece ahead of the kernel's copy rather than all
// before it.
func (tc *link) authFrames(hs []transport.Header, ps [][]byte) {
	const hlen = transport.HeaderSize + tagSize
	out := tc.auth.out
	k := 0
	for _, p := range ps {
		k += chunks(len(p))
	}
	// Sized before the first slice is taken of them: the seals write
	// into tags after the batch holds its slices.
	if cap(tc.hdrs) < len(hs)*hlen {
		tc.hdrs = make([]byte, len(hs)*hlen)
	}
	if cap(tc.tags) < k*tagSize {
		tc.tags = make([]byte, k*tagSize)
	}
	tc.batch, tc.seals, tc.sealed = tc.batch[:0], tc.seals[:0], 0
	off, next := 0, 0
	for i, h := range hs {
		b := tc.hdrs[i*hlen : (i+1)*hlen]
		h.Put(b)
		seq := out.seq
		out.seq++
		out.tag(b[transport.HeaderSize:], seq, 0, b[:transport.HeaderSize])
		tc.batch = append(tc.batch, b)
		off += hlen
		p := ps[i]
		for dom := uint32(1); len(p) > 0; dom++ {
			d := p[:min(len(p), authChunk)]
			p = p[len(d):]
			tag := tc.tags[next*tagSize : (next+1)*tagSize]
			next++
			tc.batch = append(tc.batch, d, tag)
			off += len(d)
			tc.seals = append(tc.seals, seal{off: off, tag: tag, data: d, seq: seq, dom: dom})
			off += tagSize
		}
	}
	tc.bufs = tc.batch // WriteTo consumes the slice it is given; a local would escape (allocate)
}

// pieceLimit returns how many bytes the piece of an authenticated write
// that starts at byte done may hold (writePiece on a link that is not
// authenticated): up to the next tag not yet computed. A chunk of
// splitChunk bytes or more goes before its tag is computed, and the tag
// with the next piece: the receiver copies the chunk in while the sender
// computes its tag, and computes its own as soon as the chunk is in,
// before the tag comes, so that the two ends hash at once rather than
// one after the other. The tag of a smaller chunk is computed now and
// goes with it: hashing it costs less than the write and the wake-up a
// tag of its own would.
func (tc *link) pieceLimit(done int) int {
	for tc.sealed < len(tc.seals) {
		if s := &tc.seals[tc.sealed]; s.off > done && len(s.data) >= splitChunk {
			return min(writePiece, s.off-done)
		}
		tc.sealTo(tc.seals[tc.sealed].off + 1)
	}
	return writePiece
}

// sealTo computes the tags that lie before byte end of the write.
func (tc *link) sealTo(end int) {
	for tc.sealed < len(tc.seals) && tc.seals[tc.sealed].off < end {
		s := &tc.seals[tc.sealed]
		tc.auth.out.tag(s.tag, s.seq, s.dom, s.data)
		tc.sealed++
	}
}

// authDone forgets an authenticated write's buffers: the callers' are not
// ours to keep.
func (tc *link) authDone() {
	clear(tc.batch)
	clear(tc.seals)
	tc.seals = tc.seals[:0]
}

// authControl sets tc.cbuf to a control frame as an authenticated link
// carries it (TrySend: one chunk at most) under the next sequence
// number, which the caller counts (out.seq++) once any of it is written.
func (tc *link) authControl(h transport.Header, payload []byte) {
	const hlen = transport.HeaderSize + tagSize
	out := tc.auth.out
	n := hlen + len(payload)
	if len(payload) > 0 {
		n += tagSize
	}
	tc.cbuf = slices.Grow(tc.cbuf[:0], n)[:n]
	h.Put(tc.cbuf)
	out.tag(tc.cbuf[transport.HeaderSize:hlen], out.seq, 0, tc.cbuf[:transport.HeaderSize])
	copy(tc.cbuf[hlen:], payload)
	if len(payload) > 0 {
		out.tag(tc.cbuf[n-tagSize:], out.seq, 1, payload)
	}
}

// The read side (under the link's read token).

// authRead is an authenticated link's read side: the frame being read.
type authRead struct {
	in    *gmac
	peer  int
	addr  net.Addr
	plen  int // the frame's payload
	got   int // bytes of it read
	left  int // bytes of the chunk being read still to come
	chunk uint32
	// The chunk's bytes so far: where they were read to, while that is
	// one run of memory (span), else a copy of them (aside, asideOn).
	span    []byte
	aside   []byte
	asideOn bool
	tag     [tagSize]byte
}

// header checks a header and its tag (hb), before anything acts on it.
func (ar *authRead) header(hb []byte) error {
	if !ar.in.check(hb[transport.HeaderSize:], ar.in.seq, 0, hb[:transport.HeaderSize]) {
		return ar.tampered("header")
	}
	return nil
}

// begin starts the payload of a frame whose header holds: plen bytes.
func (ar *authRead) begin(plen int) {
	ar.plen, ar.got, ar.chunk = plen, 0, 1
	ar.left = min(plen, authChunk)
}

// end ends the frame once the engine has it: every byte read and its
// chunk's tag checked, the next frame's sequence number.
func (ar *authRead) end() error {
	if ar.got != ar.plen {
		return fmt.Errorf("%w: %d of the %d bytes of a frame from rank %d were read", transport.ErrProtocol, ar.got, ar.plen, ar.peer)
	}
	ar.in.seq++
	return nil
}

// authFill is the fill of an authenticated link: the payload goes where
// the engine puts it, each chunk's tag read and checked as soon as the
// chunk is in.
func (tc *link) authFill(b []byte) error {
	ar := tc.rd.ar
	for len(b) > 0 {
		if ar.left == 0 {
			return fmt.Errorf("%w: more asked of a frame from rank %d than its %d bytes", transport.ErrProtocol, ar.peer, ar.plen)
		}
		k := min(len(b), ar.left)
		ar.collect(b[:k])
		if err := tc.rd.plain(b[:k]); err != nil {
			return err
		}
		if ar.asideOn {
			ar.aside = append(ar.aside, b[:k]...)
		}
		ar.left -= k
		ar.got += k
		b = b[k:]
		if ar.left > 0 {
			continue
		}
		// The chunk's tag is computed before its tag is read: the
		// sender computes the tag while this end does (pieceLimit).
		data := ar.span
		if ar.asideOn {
			data = ar.aside
		}
		ar.in.tag(ar.in.want[:], ar.in.seq, ar.chunk, data)
		ar.span, ar.aside, ar.asideOn = nil, ar.aside[:0], false
		if err := tc.rd.plain(ar.tag[:]); err != nil {
			return err
		}
		if subtle.ConstantTimeCompare(ar.in.want[:], ar.tag[:]) != 1 {
			return ar.tampered(fmt.Sprintf("payload (chunk %d)", ar.chunk))
		}
		ar.chunk++
		ar.left = min(ar.plen-ar.got, authChunk)
	}
	return nil
}

// collect makes b, about to be read into, part of the chunk's bytes. The
// engine gives a frame's payload in consecutive pieces of one buffer,
// mostly, and then the chunk is checked where it lies. A piece elsewhere
// (a buffer grown between two pieces, a scratch buffer read into again)
// sends the chunk aside: what was read of it is copied there before b is
// read into (b may be the very bytes read before), and b once it is
// (authFill).
func (ar *authRead) collect(b []byte) {
	switch s := ar.span; {
	case ar.asideOn:
	case s == nil:
		ar.span = b
	case cap(s) >= len(s)+len(b) && &s[:len(s)+1][len(s)] == &b[0]:
		ar.span = s[:len(s)+len(b)]
	default:
		ar.aside = append(ar.aside[:0], s...)
		ar.span, ar.asideOn = nil, true
	}
}

// tampered is the error of a part of the frame being read whose tag
// does not hold.
func (ar *authRead) tampered(what string) error {
	return fmt.Errorf("%w: the %s of frame %d from rank %d at %v", ErrTampered, what, ar.in.seq, ar.peer, ar.addr)
}
