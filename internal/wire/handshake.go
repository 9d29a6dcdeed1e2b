package wire

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
)

// The handshake that opens every TCP connection between two ranks. Both
// prove knowledge of the job's secret without sending it, over fresh
// random nonces (so a recorded handshake cannot be replayed):
//
//	server → client  hello   "SIGCHKv2" serverRank nonceS[32]                       (44 bytes)
//	client → server  join    "SIGCHKv2" clientRank size optsC nonceC[32] macC[32]   (81 bytes)
//	server → client  accept  1 optsS macS[32]                                       (34 bytes)
//
//	macC = HMAC-SHA256(key, "sigcheck client" nonceS nonceC clientRank size serverRank optsC)
//	macS = HMAC-SHA256(key, "sigcheck server" nonceC nonceS serverRank clientRank size optsS optsC)
//
// with key = SHA-256 of the secret and ranks, sizes and options as
// 4-byte little-endian. A server that cannot check macC closes the
// connection without a word; a client that cannot check macS does the
// same. The options (Opt*) are what each end asks of the link; each
// end's are under its MAC, and the server's MAC covers the client's
// too, so that nobody on the way can change what either end asked for
// (turn authentication off, say) without failing the handshake.
//
// Both ends then hold the same link secret, which nobody without the
// job's secret can compute and which no other connection shares:
//
//	link = HKDF-SHA256(key, salt = nonceS nonceC, info = "sigcheck link" lowRank highRank size)
//
// Keys for a purpose (an AEAD on the link) are expanded from it under a
// label (LinkKey), never used as they are.
const (
	handshakeMagic = "SIGCHKv2"
	magicPrefix    = "SIGCHK" // the magic without its version
	nonceSize      = 32
	macSize        = sha256.Size
)

// The sizes of the handshake's messages (for a relay that passes them).
const (
	HelloSize  = len(handshakeMagic) + 4 + nonceSize
	JoinSize   = len(handshakeMagic) + 4 + 4 + 1 + nonceSize + macSize
	AcceptSize = 1 + 1 + macSize
)

// The options an end states in its handshake (join, accept).
const (
	// OptAuth: this end wants the link's frames authenticated (package
	// channel/tcp says how).
	OptAuth = 1 << 0
	// OptAuthSaid: and it was told so, or told not to (without OptAuth),
	// rather than left to choose by where the peer is.
	OptAuthSaid = 1 << 1
	optsKnown   = OptAuth | OptAuthSaid
)

// JobKey derives the HMAC key from a job's secret.
func JobKey(secret []byte) []byte {
	k := sha256.Sum256(secret)
	return k[:]
}

func newNonce() ([]byte, error) {
	n := make([]byte, nonceSize)
	_, err := rand.Read(n)
	return n, err
}

func handshakeMAC(key []byte, label string, n1, n2 []byte, ints ...int) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	m.Write(n1)
	m.Write(n2)
	for _, v := range ints {
		m.Write(binary.LittleEndian.AppendUint32(nil, uint32(v)))
	}
	return m.Sum(nil)
}

type hello struct {
	rank  int
	nonce []byte
}

func (h hello) encode() []byte {
	b := append([]byte(handshakeMagic), binary.LittleEndian.AppendUint32(nil, uint32(h.rank))...)
	return append(b, h.nonce...)
}

// checkMagic says what is wrong with a handshake message's first bytes:
// not a sigcheck handshake at all, or one of another version.
func checkMagic(b []byte) error {
	switch {
	case len(b) >= len(handshakeMagic) && string(b[:len(handshakeMagic)]) == handshakeMagic:
		return nil
	case len(b) >= len(handshakeMagic) && string(b[:len(magicPrefix)]) == magicPrefix:
		return fmt.Errorf("%w: a handshake of version %q, this build speaks %q (another build of sigcheck)", ErrUnauthenticated, b[len(magicPrefix):len(handshakeMagic)], handshakeMagic[len(magicPrefix):])
	}
	return fmt.Errorf("%w: not a sigcheck handshake", ErrUnauthenticated)
}

func ParseHello(b []byte) (hello, error) {
	if err := checkMagic(b); err != nil {
		return hello{}, err
	}
	if len(b) != HelloSize {
		return hello{}, fmt.Errorf("%w: not a sigcheck handshake", ErrUnauthenticated)
	}
	r := binary.LittleEndian.Uint32(b[8:])
	if r >= MaxRanks {
		return hello{}, fmt.Errorf("%w: rank %d in the handshake", ErrUnauthenticated, r)
	}
	return hello{rank: int(r), nonce: b[12:]}, nil
}

type join struct {
	rank, size int
	opts       byte
	nonce, mac []byte
}

func (j join) encode() []byte {
	b := []byte(handshakeMagic)
	b = binary.LittleEndian.AppendUint32(b, uint32(j.rank))
	b = binary.LittleEndian.AppendUint32(b, uint32(j.size))
	b = append(b, j.opts)
	b = append(b, j.nonce...)
	return append(b, j.mac...)
}

func ParseJoin(b []byte) (join, error) {
	if err := checkMagic(b); err != nil {
		return join{}, err
	}
	if len(b) != JoinSize {
		return join{}, fmt.Errorf("%w: not a sigcheck handshake", ErrUnauthenticated)
	}
	j := join{
		rank:  int(binary.LittleEndian.Uint32(b[8:])),
		size:  int(binary.LittleEndian.Uint32(b[12:])),
		opts:  b[16],
		nonce: b[17 : 17+nonceSize],
		mac:   b[17+nonceSize:],
	}
	if j.size < 1 || j.size > MaxRanks || j.rank < 0 || j.rank >= j.size { // negative: over 2^31 on 32-bit machines
		return join{}, fmt.Errorf("%w: rank %d of %d in the handshake", ErrUnauthenticated, j.rank, j.size)
	}
	if j.opts&^optsKnown != 0 {
		return join{}, fmt.Errorf("%w: options %#x in the handshake", ErrUnauthenticated, j.opts)
	}
	return j, nil
}

// Peer is the other end of an authenticated connection.
type Peer struct {
	Rank int
	// Link is the link secret both ends derived from the handshake.
	Link []byte
	// Opts are the options the peer stated (Opt*).
	Opts byte
}

func linkSecret(key, nS, nC []byte, a, b, size int) []byte {
	lo, hi := min(a, b), max(a, b)
	info := binary.LittleEndian.AppendUint32([]byte("sigcheck link"), uint32(lo))
	info = binary.LittleEndian.AppendUint32(info, uint32(hi))
	info = binary.LittleEndian.AppendUint32(info, uint32(size))
	k, err := hkdf.Key(sha256.New, key, append(append([]byte{}, nS...), nC...), string(info), 32)
	if err != nil {
		panic(err) // only for lengths beyond 255 hashes
	}
	return k
}

// LocalLink is the link secret between ranks a and b of an in-process
// job whose secret is job: derived as a handshake's is, with no nonces
// (the job secret is random and never leaves the process).
func LocalLink(job []byte, a, b, size int) []byte {
	return linkSecret(job, nil, nil, a, b, size)
}

// LinkKey expands a link secret into a key of n bytes for one purpose
// (label): different labels give independent keys.
func LinkKey(link []byte, label string, n int) ([]byte, error) {
	return hkdf.Expand(sha256.New, link, "sigcheck key "+label, n)
}

// MaxRanks bounds the ranks of a job.
const MaxRanks = 1 << 16

// ServerHandshake runs the server side on rw, stating the options opts:
// it returns the authenticated client, or an error after which rw must
// be closed.
func ServerHandshake(rw io.ReadWriter, key []byte, myRank, size int, opts byte) (Peer, error) {
	nS, err := newNonce()
	if err != nil {
		return Peer{}, err
	}
	if _, err := rw.Write(hello{rank: myRank, nonce: nS}.encode()); err != nil {
		return Peer{}, err
	}
	b := make([]byte, JoinSize)
	if _, err := io.ReadFull(rw, b); err != nil {
		return Peer{}, fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	}
	j, err := ParseJoin(b)
	if err != nil {
		return Peer{}, err
	}
	want := handshakeMAC(key, "sigcheck client", nS, j.nonce, j.rank, j.size, myRank, int(j.opts))
	if !hmac.Equal(j.mac, want) {
		return Peer{}, fmt.Errorf("%w: wrong job secret (claimed rank %d)", ErrUnauthenticated, j.rank)
	}
	if j.size != size || j.rank == myRank {
		return Peer{}, fmt.Errorf("%w: rank %d of %d, this job has %d ranks and this is rank %d", ErrUnauthenticated, j.rank, j.size, size, myRank)
	}
	mac := handshakeMAC(key, "sigcheck server", j.nonce, nS, myRank, j.rank, size, int(opts), int(j.opts))
	if _, err := rw.Write(append([]byte{1, opts}, mac...)); err != nil {
		return Peer{}, err
	}
	return Peer{j.rank, linkSecret(key, nS, j.nonce, myRank, j.rank, size), j.opts}, nil
}

// ClientHandshake runs the client side on rw, to the server of rank
// wantRank (or any rank for -1), stating the options opts, and returns
// the server.
func ClientHandshake(rw io.ReadWriter, key []byte, myRank, size, wantRank int, opts byte) (Peer, error) {
	b := make([]byte, HelloSize)
	if _, err := io.ReadFull(rw, b); err != nil {
		return Peer{}, fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	}
	h, err := ParseHello(b)
	if err != nil {
		return Peer{}, err
	}
	if wantRank >= 0 && h.rank != wantRank {
		return Peer{}, fmt.Errorf("%w: reached rank %d, wanted %d", ErrUnauthenticated, h.rank, wantRank)
	}
	nC, err := newNonce()
	if err != nil {
		return Peer{}, err
	}
	mac := handshakeMAC(key, "sigcheck client", h.nonce, nC, myRank, size, h.rank, int(opts))
	if _, err := rw.Write(join{rank: myRank, size: size, opts: opts, nonce: nC, mac: mac}.encode()); err != nil {
		return Peer{}, err
	}
	a := make([]byte, AcceptSize)
	if _, err := io.ReadFull(rw, a); err != nil {
		return Peer{}, fmt.Errorf("%w: rank %d refused the handshake (another job's secret?): %v", ErrUnauthenticated, h.rank, err)
	}
	sOpts := a[1]
	if a[0] != 1 || !hmac.Equal(a[2:], handshakeMAC(key, "sigcheck server", nC, h.nonce, h.rank, myRank, size, int(sOpts), int(opts))) {
		return Peer{}, fmt.Errorf("%w: rank %d does not know the job secret", ErrUnauthenticated, h.rank)
	}
	if sOpts&^optsKnown != 0 {
		return Peer{}, fmt.Errorf("%w: rank %d stated options %#x", ErrUnauthenticated, h.rank, sOpts)
	}
	return Peer{h.rank, linkSecret(key, h.nonce, nC, myRank, h.rank, size), sOpts}, nil
}
