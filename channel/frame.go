package channel

import (
	"encoding/binary"
	"fmt"
)

// A frame is what a transport moves: a fixed 48-byte header and up to
// MaxFrame bytes of payload. A message is one or more frames: kindMsg
// opens it (and carries its first bytes), kindData carries the rest in
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
const headerSize = 48

const frameVersion = 1

// Frame kinds.
const (
	kindMsg  = 1 // opens a message
	kindData = 2 // continues it
	kindLast = kindData
)

// MaxFrame is the largest payload of one frame; messages are cut into
// frames of at most this size.
const MaxFrame = 256 << 10

// MaxMessage is the largest message a receiver accepts.
const MaxMessage = 1 << 40

type header struct {
	kind   byte
	plen   int    // payload bytes after the header
	ctx    uint32 // communicator context
	tag    int64
	id     uint64
	offset int64
	total  int64
}

func (h *header) put(b []byte) {
	_ = b[headerSize-1]
	clear(b[:headerSize])
	b[0] = frameVersion
	b[1] = h.kind
	binary.LittleEndian.PutUint32(b[4:], uint32(h.plen))
	binary.LittleEndian.PutUint32(b[8:], h.ctx)
	binary.LittleEndian.PutUint64(b[16:], uint64(h.tag))
	binary.LittleEndian.PutUint64(b[24:], h.id)
	binary.LittleEndian.PutUint64(b[32:], uint64(h.offset))
	binary.LittleEndian.PutUint64(b[40:], uint64(h.total))
}

// parseHeader decodes and checks a frame header.
func parseHeader(b []byte) (header, error) {
	if len(b) < headerSize {
		return header{}, fmt.Errorf("%w: frame header of %d bytes, want %d", ErrProtocol, len(b), headerSize)
	}
	h := header{
		kind:   b[1],
		plen:   int(binary.LittleEndian.Uint32(b[4:])),
		ctx:    binary.LittleEndian.Uint32(b[8:]),
		tag:    int64(binary.LittleEndian.Uint64(b[16:])),
		id:     binary.LittleEndian.Uint64(b[24:]),
		offset: int64(binary.LittleEndian.Uint64(b[32:])),
		total:  int64(binary.LittleEndian.Uint64(b[40:])),
	}
	bad := func(format string, args ...any) (header, error) {
		return header{}, fmt.Errorf("%w: frame: %s", ErrProtocol, fmt.Sprintf(format, args...))
	}
	switch {
	case b[0] != frameVersion:
		return bad("version %d, this build speaks %d", b[0], frameVersion)
	case h.kind == 0 || h.kind > kindLast:
		return bad("unknown kind %d", h.kind)
	case b[2] != 0 || b[3] != 0 || binary.LittleEndian.Uint32(b[12:]) != 0:
		return bad("reserved bytes set")
	case h.plen > MaxFrame:
		return bad("payload of %d bytes, the limit is %d", h.plen, MaxFrame)
	case h.tag < 0:
		return bad("negative tag %d", h.tag)
	case h.total < 0 || h.total > MaxMessage:
		return bad("message of %d bytes, the limit is %d", h.total, int64(MaxMessage))
	case h.offset < 0 || h.offset > h.total-int64(h.plen):
		return bad("payload of %d bytes at offset %d of a %d-byte message", h.plen, h.offset, h.total)
	case h.kind == kindMsg && h.offset != 0:
		return bad("a message opening at offset %d", h.offset)
	case h.kind == kindData && h.plen == 0:
		return bad("an empty continuation frame")
	}
	return h, nil
}
