package encrypt

import (
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
)

// The parts of the Gatherer that another all-gather over another
// transport reuses (cmd/libsigcheck's, over MPI between processes): the
// same cipher, nonces, associated data, frames and Auto, so that both
// seal what they send the same way and a change to one reaches the other.

// KeyLen is the length of a job key: AES-128, as the paper's BoringSSL
// runs GCM.
const KeyLen = jobKeyLen

// TagLen is the length of a GCM tag, which ends every ciphertext.
const TagLen = tagLen

// FrameHeaderLen and FrameEntryLen are the sizes of a frame's fixed
// header and of a piece's entry in its table before the entry's origins
// (4 bytes each): a sender that writes the pieces' data in place first
// knows from them where the data begin.
const (
	FrameHeaderLen = hdrLen
	FrameEntryLen  = entryLen
)

// NewAEAD returns AES-GCM under key (KeyLen bytes, or 32 for AES-256).
func NewAEAD(key []byte) (cipher.AEAD, error) { return newGCM(key) }

// DeriveKey expands a secret into a KeyLen-byte key with HKDF-SHA256,
// salted and labelled, as the Gatherer derives its wrap and envelope keys
// from a link's key: another salt or info gives an unrelated key.
func DeriveKey(secret, salt []byte, info string) ([]byte, error) {
	return hkdf.Key(sha256.New, secret, salt, info, jobKeyLen)
}

// PutNonce writes the nonce of a sealing party's ctr-th seal into n and
// returns it: prefix (the party: a rank) and its counter, so that nonces
// under one key never repeat as long as no party reuses a counter value.
func PutNonce(n *[12]byte, prefix uint32, ctr uint64) []byte {
	return nonceOf(n, int(prefix), ctr)
}

// AppendPieceAAD appends the associated data of a ciphertext holding the
// blocks of origins, in all-gather seq by algorithm a: what the
// Gatherer's pieces bind, so that a ciphertext can be forwarded as it is
// but not passed off as another all-gather's, another algorithm's, or
// other ranks' blocks.
func AppendPieceAAD(b []byte, a Algorithm, seq uint64, origins []int) []byte {
	b = append(b, "SE1"...)
	b = append(b, byte(a))
	b = binary.LittleEndian.AppendUint64(b, seq)
	for _, o := range origins {
		b = binary.LittleEndian.AppendUint32(b, uint32(o))
	}
	return b
}

// AppendFrameHeader appends what AppendFrame writes before the pieces'
// data: the header and the pieces' table, whose lengths are the pieces'
// Data's. A sender that seals each piece straight into its place after
// them writes the header last, without copying the data again.
func AppendFrameHeader(b []byte, h *Header, pieces []Piece) []byte { return appendHeader(b, h, pieces) }

// MaxFrameSize is the largest frame (AppendFrame, unsealed or sealed)
// that brings origins blocks of m bytes in at most that many pieces: what
// a receiver posts for a step before it knows how the sender split them.
func MaxFrameSize(origins, m int) int { return maxFrameSize(origins, m) }

// Choose is Auto's choice for blocks of m bytes on lay, as a Gatherer on
// lay makes it (Gatherer.Choose says from what).
func Choose(lay Layout, m int) Algorithm { return (&Gatherer{lay: lay}).Choose(m) }
