package encrypt

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// KeySource gives the key of the link between this rank and peer for one
// purpose (label): the same at both ends, another for every link and
// label, unknown outside the job. *channel.Endpoint is one: its keys come
// from the job's secret and the nonces of each link's authenticated
// handshake (NewLocal's, from a random secret of the job).
type KeySource interface {
	LinkKey(peer int, label string) ([]byte, error)
}

// Errors a caller acts on (errors.Is).
var (
	// ErrAuth: a frame or key that failed authentication — tampered
	// with, sealed under another key, or sent on another link. Nothing
	// of it was delivered.
	ErrAuth = errors.New("encrypt: authentication failed")
	// ErrReplay: an authentic frame out of its place on its link — an
	// old one again, or one ahead of its turn.
	ErrReplay = errors.New("encrypt: frame replayed or out of order")
)

// Labels of the link keys this package asks for.
const (
	labelWrap     = "sigcheck/encrypt/v1/wrap"
	labelEnvelope = "sigcheck/encrypt/v1/envelope"
	jobKeyLen     = 16 // AES-128-GCM, as the paper measured (BoringSSL's)
	saltLen       = 32
	setupLen      = saltLen + 32 + jobKeyLen + tagLen
)

// derive expands a link key into an AES-GCM for this Gatherer's salt, so
// two Gatherers of one job never share a key, hence never a nonce.
func derive(linkKey, salt []byte, info string) (cipher.AEAD, error) {
	k, err := hkdf.Key(sha256.New, linkKey, salt, info, jobKeyLen)
	if err != nil {
		return nil, err
	}
	return newGCM(k)
}

func newGCM(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// setup gives every rank the job key of this Gatherer: rank 0 draws it
// and a salt, and sends each rank the salt, the layout's digest and the
// key sealed under their link's wrap key expanded with the salt. A rank
// with another layout fails with ErrLayout, one whose link key differs
// with ErrAuth. The salt then keys the envelopes of every link afresh.
func (g *Gatherer) setup(ctx context.Context) error {
	dig := g.lay.digest()
	aad := func(r int) []byte {
		b := append([]byte("sigcheck/encrypt/v1 setup"), dig[:]...)
		b = binary.LittleEndian.AppendUint32(b, uint32(r))
		return binary.LittleEndian.AppendUint32(b, uint32(g.p))
	}
	var nonce [12]byte // each wrap key seals once
	if g.rank == 0 {
		g.salt = make([]byte, saltLen)
		key := make([]byte, jobKeyLen)
		rand.Read(g.salt)
		rand.Read(key)
		for r := 1; r < g.p; r++ {
			lk, err := g.keys.LinkKey(r, labelWrap)
			if err != nil {
				return fmt.Errorf("encrypt: key of the link to rank %d: %w", r, err)
			}
			w, err := derive(lk, g.salt, "wrap")
			if err != nil {
				return err
			}
			msg := append(append([]byte(nil), g.salt...), dig[:]...)
			msg = w.Seal(msg, nonce[:], key, aad(r))
			if err := g.c.Send(ctx, r, tagSetup, msg); err != nil {
				return err
			}
		}
		return g.useJobKey(key)
	}
	msg := make([]byte, setupLen)
	st, err := g.c.Recv(ctx, 0, tagSetup, msg)
	if err != nil {
		return err
	}
	if st.Len != setupLen {
		return fmt.Errorf("%w: a key message of %d bytes from rank 0, %d expected", ErrFrame, st.Len, setupLen)
	}
	g.salt = append([]byte(nil), msg[:saltLen]...)
	if [32]byte(msg[saltLen:saltLen+32]) != dig {
		return fmt.Errorf("%w: rank %d's layout (%v) is not rank 0's", ErrLayout, g.rank, g.lay)
	}
	lk, err := g.keys.LinkKey(0, labelWrap)
	if err != nil {
		return fmt.Errorf("encrypt: key of the link to rank 0: %w", err)
	}
	w, err := derive(lk, g.salt, "wrap")
	if err != nil {
		return err
	}
	key, err := w.Open(nil, nonce[:], msg[saltLen+32:], aad(g.rank))
	if err != nil {
		return fmt.Errorf("%w: the job key from rank 0 (is the link key rank %d holds rank 0's?)", ErrAuth, g.rank)
	}
	return g.useJobKey(key)
}

func (g *Gatherer) useJobKey(key []byte) error {
	a, err := newGCM(key)
	g.job = a
	return err
}

// link returns the envelope state of the link to peer, keyed on first use.
func (g *Gatherer) link(peer int) (*link, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if l := g.links[peer]; l != nil {
		return l, nil
	}
	lk, err := g.keys.LinkKey(peer, labelEnvelope)
	if err != nil {
		return nil, fmt.Errorf("encrypt: key of the link to rank %d: %w", peer, err)
	}
	a, err := derive(lk, g.salt, "envelope")
	if err != nil {
		return nil, err
	}
	l := &link{aead: a}
	g.links[peer] = l
	return l, nil
}

// link is one direction pair's envelope state: sends and receives count
// apart, and the nonce's prefix is the sender's rank, so the two ends
// never seal under one nonce.
type link struct {
	aead       cipher.AEAD
	sent, recd uint64
}

func nonceOf(n *[12]byte, rank int, ctr uint64) []byte {
	binary.LittleEndian.PutUint32(n[:4], uint32(rank))
	binary.LittleEndian.PutUint64(n[4:], ctr)
	return n[:]
}
