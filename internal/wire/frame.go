// Package wire holds the byte formats of package channel: frame headers,
// the handshake that opens a TCP link, and the bootstrap messages. It is
// separate so that the fuzz targets (and other implementations' authors)
// can reach each decoder alone.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Errors of the decoders; package channel returns them as its own.
var (
	ErrProtocol        = errors.New("channel: protocol violation")
	ErrUnauthenticated = errors.New("channel: peer not authenticated")
)

// A frame is what a transport moves: a fixed 48-byte header and up to
// MaxFrame bytes of payload. A message is one or more frames: KindMsg
// opens it (and carries its first bytes), KindData carries the rest in
// order. Every field is little-endian:
//
//	0   version (1)
//	1   kind
//	2   flags (0)
//	4   payload length
//	8   context: which communicator (0 for the world, others for layers)
//	12  reserved (0)
//	16  tag
//	24  message id: per sender, increasing
//	32  offset of the payload in the message
//	40  total length of the message
//
// The header alone says how many payload bytes follow, so a receiver can
// stay in step with a stream; every field is checked before a byte of
// payload is read, and no allocation is sized by a header.
const HeaderSize = 48

const frameVersion = 1

// Frame kinds.
const (
	KindMsg  = 1 // opens a message
	KindData = 2 // continues it
	kindLast = KindData
)

// MaxFrame is the largest payload of one frame; messages are cut into
// frames of at most this size.
const MaxFrame = 256 << 10

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
}

// Put writes h into b[:HeaderSize].
func (h *Header) Put(b []byte) {
	_ = b[HeaderSize-1]
	clear(b[:HeaderSize])
	b[0] = frameVersion
	b[1] = h.Kind
	binary.LittleEndian.PutUint32(b[4:], uint32(h.Plen))
	binary.LittleEndian.PutUint32(b[8:], h.Ctx)
	binary.LittleEndian.PutUint64(b[16:], uint64(h.Tag))
	binary.LittleEndian.PutUint64(b[24:], h.ID)
	binary.LittleEndian.PutUint64(b[32:], uint64(h.Offset))
	binary.LittleEndian.PutUint64(b[40:], uint64(h.Total))
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
	}
	bad := func(format string, args ...any) (Header, error) {
		return Header{}, fmt.Errorf("%w: frame: %s", ErrProtocol, fmt.Sprintf(format, args...))
	}
	switch {
	case b[0] != frameVersion:
		return bad("version %d, this build speaks %d", b[0], frameVersion)
	case h.Kind == 0 || h.Kind > kindLast:
		return bad("unknown kind %d", h.Kind)
	case b[2] != 0 || b[3] != 0 || binary.LittleEndian.Uint32(b[12:]) != 0:
		return bad("reserved bytes set")
	case h.Plen > MaxFrame:
		return bad("payload of %d bytes, the limit is %d", h.Plen, MaxFrame)
	case h.Tag < 0:
		return bad("negative tag %d", h.Tag)
	case h.Total < 0 || h.Total > MaxMessage:
		return bad("message of %d bytes, the limit is %d", h.Total, int64(MaxMessage))
	case h.Offset < 0 || h.Offset > h.Total-int64(h.Plen):
		return bad("payload of %d bytes at offset %d of a %d-byte message", h.Plen, h.Offset, h.Total)
	case h.Kind == KindMsg && h.Offset != 0:
		return bad("a message opening at offset %d", h.Offset)
	case h.Kind == KindData && h.Plen == 0:
		return bad("an empty continuation frame")
	}
	return h, nil
}
