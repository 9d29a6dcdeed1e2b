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
//	server → client  hello   "SIGCHKv1" serverRank nonceS[32]                      (44 bytes)
//	client → server  join    "SIGCHKv1" clientRank size nonceC[32] macC[32]        (80 bytes)
//	server → client  accept  1 macS[32]                                            (33 bytes)
//
//	macC = HMAC-SHA256(key, "sigcheck client" nonceS nonceC clientRank size serverRank)
//	macS = HMAC-SHA256(key, "sigcheck server" nonceC nonceS serverRank clientRank size)
//
// with key = SHA-256 of the secret and ranks and sizes as 4-byte
// little-endian. A server that cannot check macC closes the connection
// without a word; a client that cannot check macS does the same.
//
// Both ends then hold the same link secret, which nobody without the
// job's secret can compute and which no other connection shares:
//
//	link = HKDF-SHA256(key, salt = nonceS nonceC, info = "sigcheck link" lowRank highRank size)
//
// Keys for a purpose (an AEAD on the link) are expanded from it under a
// label (LinkKey), never used as they are.
const (
	handshakeMagic = "SIGCHKv1"
	nonceSize      = 32
	macSize        = sha256.Size
	helloSize      = len(handshakeMagic) + 4 + nonceSize
	joinSize       = len(handshakeMagic) + 4 + 4 + nonceSize + macSize
	acceptSize     = 1 + macSize
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

func ParseHello(b []byte) (hello, error) {
	if len(b) != helloSize || string(b[:8]) != handshakeMagic {
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
	nonce, mac []byte
}

func (j join) encode() []byte {
	b := []byte(handshakeMagic)
	b = binary.LittleEndian.AppendUint32(b, uint32(j.rank))
	b = binary.LittleEndian.AppendUint32(b, uint32(j.size))
	b = append(b, j.nonce...)
	return append(b, j.mac...)
}

func ParseJoin(b []byte) (join, error) {
	if len(b) != joinSize || string(b[:8]) != handshakeMagic {
		return join{}, fmt.Errorf("%w: not a sigcheck handshake", ErrUnauthenticated)
	}
	j := join{
		rank:  int(binary.LittleEndian.Uint32(b[8:])),
		size:  int(binary.LittleEndian.Uint32(b[12:])),
		nonce: b[16 : 16+nonceSize],
		mac:   b[16+nonceSize:],
	}
	if j.size < 1 || j.size > MaxRanks || j.rank < 0 || j.rank >= j.size { // negative: over 2^31 on 32-bit machines
		return join{}, fmt.Errorf("%w: rank %d of %d in the handshake", ErrUnauthenticated, j.rank, j.size)
	}
	return j, nil
}

// Peer is the other end of an authenticated connection.
type Peer struct {
	Rank int
	// Link is the link secret both ends derived from the handshake.
	Link []byte
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

// ServerHandshake runs the server side on rw: it returns the
// authenticated client, or an error after which rw must be closed.
func ServerHandshake(rw io.ReadWriter, key []byte, myRank, size int) (Peer, error) {
	nS, err := newNonce()
	if err != nil {
		return Peer{}, err
	}
	if _, err := rw.Write(hello{rank: myRank, nonce: nS}.encode()); err != nil {
		return Peer{}, err
	}
	b := make([]byte, joinSize)
	if _, err := io.ReadFull(rw, b); err != nil {
		return Peer{}, fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	}
	j, err := ParseJoin(b)
	if err != nil {
		return Peer{}, err
	}
	want := handshakeMAC(key, "sigcheck client", nS, j.nonce, j.rank, j.size, myRank)
	if !hmac.Equal(j.mac, want) {
		return Peer{}, fmt.Errorf("%w: wrong job secret (claimed rank %d)", ErrUnauthenticated, j.rank)
	}
	if j.size != size || j.rank == myRank {
		return Peer{}, fmt.Errorf("%w: rank %d of %d, this job has %d ranks and this is rank %d", ErrUnauthenticated, j.rank, j.size, size, myRank)
	}
	mac := handshakeMAC(key, "sigcheck server", j.nonce, nS, myRank, j.rank, size)
	if _, err := rw.Write(append([]byte{1}, mac...)); err != nil {
		return Peer{}, err
	}
	return Peer{j.rank, linkSecret(key, nS, j.nonce, myRank, j.rank, size)}, nil
}

// ClientHandshake runs the client side on rw, to the server of rank
// wantRank (or any rank for -1), and returns the server.
func ClientHandshake(rw io.ReadWriter, key []byte, myRank, size, wantRank int) (Peer, error) {
	b := make([]byte, helloSize)
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
	mac := handshakeMAC(key, "sigcheck client", h.nonce, nC, myRank, size, h.rank)
	if _, err := rw.Write(join{rank: myRank, size: size, nonce: nC, mac: mac}.encode()); err != nil {
		return Peer{}, err
	}
	a := make([]byte, acceptSize)
	if _, err := io.ReadFull(rw, a); err != nil {
		return Peer{}, fmt.Errorf("%w: rank %d refused the handshake (another job's secret?): %v", ErrUnauthenticated, h.rank, err)
	}
	if a[0] != 1 || !hmac.Equal(a[1:], handshakeMAC(key, "sigcheck server", nC, h.nonce, h.rank, myRank, size)) {
		return Peer{}, fmt.Errorf("%w: rank %d does not know the job secret", ErrUnauthenticated, h.rank)
	}
	return Peer{h.rank, linkSecret(key, h.nonce, nC, myRank, h.rank, size)}, nil
}
