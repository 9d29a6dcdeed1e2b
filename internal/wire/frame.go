// Package wire holds the byte formats of package channel: frame headers,
// the handshake that opens a TCP link, and the bootstrap messages. It is
// separate so that the fuzz targets (and other implementations' authors)
// can reach each decoder alone.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zeebo/xxh3"
)

// Errors of the decoders; package channel returns them as its own.
var (
	ErrProtocol        = errors.New("channel: protocol violation")
	ErrUnauthenticated = errors.New("channel: peer not authenticated")
)

// A frame is what a transport moves: a fixed 64-byte header and up to
// MaxFrame bytes of payload. Every field is little-endian:
//
//	0   version (2)
//	1   kind
//	2   flags: the checksum algorithm of a checksum-protected data frame, else 0
//	4   payload length
//	8   context: which communicator (0 for the world, others for layers)
//	12  sequence of a protected message (opener, abort, probe), per sender, receiver and context; else 0
//	16  tag
//	24  message id: per sender, increasing
//	32  offset of the payload in the message (for parity: its shard)
//	40  total length of the message
//	48  payload check: XXH3-64 of the payload where the kind calls for it
//	56  header check: XXH3-64 of bytes 0–55
//
// The header alone says how many payload bytes follow, so a receiver can
// stay in step with a stream; every field is checked, the header check
// first, before a byte of payload is read, and no allocation is sized by
// a header. A message is KindMsg (which opens it and carries its first
// bytes) and KindData frames in order; a protected message adds the
// control frames of its protocol (trailer, ask, answer, verdict, repair,
// parity), which carry the id of the message they are about.
const HeaderSize = 64

// frameVersion is what byte 0 says. Version 2 gave bytes 12–15, reserved
// and zero in version 1, the sequence of a protected message: a version 1
// peer, whose openers all say 0, would leave a version 2 receiver
// holding its messages for a gap that never fills, so the two refuse
// each other's frames instead (ParseHeader's error names both).
const frameVersion = 2

// Frame kinds.
const (
	KindMsg     = 1  // opens a message
	KindData    = 2  // continues it
	KindTrailer = 3  // sender → receiver: the message's root (Merkle protection)
	KindAsk     = 4  // receiver → sender: hashes of some tree nodes, please
	KindAnswer  = 5  // sender → receiver: those hashes
	KindVerdict = 6  // receiver → sender: all good, or which parts to resend
	KindRepair  = 7  // sender → receiver: resent bytes of the message
	KindParity  = 8  // sender → receiver: one parity segment (Offset: its index)
	KindAbort   = 9  // sender → receiver: the message is abandoned
	KindAgain   = 10 // either way: your last control frame about this message came corrupted, send it again
	KindStamp   = 11 // sender → receiver, before KindMsg: the message's datatype signature
	kindLast    = KindStamp
)

// MaxFrame is the largest payload of one frame; messages are cut into
// frames of at most this size.
const MaxFrame = 1 << 20

// MaxMessage is the largest message a receiver accepts.
const MaxMessage = 1 << 40

// Header is a frame header.
type Header struct {
	Kind   byte
	Plen   int    // payload bytes after the header
	Ctx    uint32 // communicator context
	Tag    int64
	ID     uint64
	Offset int64
	Total  int64
	Sum    uint64 // payload check, where the kind has one
	Flags  byte   // data frames of checksum protection: the algorithm
	// Seq numbers a sender's protected messages to one rank on one
	// context, in the order they were sent (openers and aborts): the
	// receiver matches them in that order even when an opener is lost
	// and comes again after later messages.
	Seq uint32
}

// Put writes h into b[:HeaderSize], with its header check.
func (h *Header) Put(b []byte) {
	_ = b[HeaderSize-1]
	clear(b[:HeaderSize])
	b[0] = frameVersion
	b[1] = h.Kind
	b[2] = h.Flags
	binary.LittleEndian.PutUint32(b[4:], uint32(h.Plen))
	binary.LittleEndian.PutUint32(b[8:], h.Ctx)
	binary.LittleEndian.PutUint32(b[12:], h.Seq)
	binary.LittleEndian.PutUint64(b[16:], uint64(h.Tag))
	binary.LittleEndian.PutUint64(b[24:], h.ID)
	binary.LittleEndian.PutUint64(b[32:], uint64(h.Offset))
	binary.LittleEndian.PutUint64(b[40:], uint64(h.Total))
	binary.LittleEndian.PutUint64(b[48:], h.Sum)
	binary.LittleEndian.PutUint64(b[56:], xxh3.Hash(b[:56]))
}

// ParseHeader decodes and checks a frame header.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: frame header of %d bytes, want %d", ErrProtocol, len(b), HeaderSize)
	}
	h := Header{
		Kind:   b[1],
		Plen:   int(binary.LittleEndian.Uint32(b[4:])),
		Ctx:    binary.LittleEndian.Uint32(b[8:]),
		Tag:    int64(binary.LittleEndian.Uint64(b[16:])),
		ID:     binary.LittleEndian.Uint64(b[24:]),
		Offset: int64(binary.LittleEndian.Uint64(b[32:])),
		Total:  int64(binary.LittleEndian.Uint64(b[40:])),
		Sum:    binary.LittleEndian.Uint64(b[48:]),
		Flags:  b[2],
		Seq:    binary.LittleEndian.Uint32(b[12:]),
	}
	bad := func(format string, args ...any) (Header, error) {
		return Header{}, fmt.Errorf("%w: frame: %s", ErrProtocol, fmt.Sprintf(format, args...))
	}
	switch {
	case binary.LittleEndian.Uint64(b[56:]) != xxh3.Hash(b[:56]):
		return bad("header check mismatch (corrupted header)")
	case b[0] != frameVersion:
		return bad("version %d, this build speaks %d", b[0], frameVersion)
	case b[3] != 0:
		return bad("reserved bytes set")
	}
	if err := h.Check(); err != nil {
		return Header{}, err
	}
	return h, nil
}

// Check checks a header's fields against the format's limits: what
// ParseHeader checks beyond the bytes themselves, for a header that
// reaches the engine as a value.
func (h *Header) Check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: frame: %s", ErrProtocol, fmt.Sprintf(format, args...))
	}
	switch {
	case h.Kind == 0 || h.Kind > kindLast:
		return bad("unknown kind %d", h.Kind)
	case h.Plen < 0 || h.Plen > MaxFrame:
		return bad("payload of %d bytes, the limit is %d", h.Plen, MaxFrame)
	case h.Tag < 0:
		return bad("negative tag %d", h.Tag)
	case h.Total < 0 || h.Total > MaxMessage:
		return bad("message of %d bytes, the limit is %d", h.Total, int64(MaxMessage))
	}
	switch h.Kind {
	case KindMsg, KindData, KindRepair:
		switch {
		case h.Offset < 0 || h.Offset > h.Total-int64(h.Plen):
			return bad("payload of %d bytes at offset %d of a %d-byte message", h.Plen, h.Offset, h.Total)
		case h.Kind == KindMsg && h.Offset != 0:
			return bad("a message opening at offset %d", h.Offset)
		case h.Kind != KindMsg && h.Plen == 0:
			return bad("an empty data frame")
		}
	case KindParity:
		if h.Offset < 0 {
			return bad("parity segment %d", h.Offset)
		}
	}
	return nil
}
