package encrypt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The frame: what one step of an all-gather sends to one rank. Every
// integer is little-endian.
//
//	header, 96 bytes
//	  0  "SE"            magic
//	  2  version         1
//	  3  flags           bit 0: sealed (an envelope tag ends the frame)
//	  4  algorithm       (Algorithm)
//	  5  3 bytes zero
//	  8  src, dst        uint32 each: the sending and the receiving rank
//	 16  seq             uint64: which all-gather of this Gatherer
//	 24  step            uint32: which step of it (the tag it travels on)
//	 28  pieces          uint32: how many pieces follow
//	 32  link counter    uint64: the envelope's nonce, one more on every sealed frame of the link
//	 40  path            7 × uint64: the sender's critical-path counts (Counts), time as float64 bits
//	pieces table, one entry a piece
//	  0  kind            1 ciphertext, 0 plaintext
//	  1  3 bytes zero
//	  4  origins         uint32: how many ranks' blocks the piece holds
//	  8  encrypter       uint32: the rank that sealed it (nonce prefix)
//	 12  counter         uint64: its nonce counter
//	 20  length          uint32: bytes of data (a ciphertext's with its 16-byte tag)
//	 24  origins × uint32: the ranks whose blocks it holds, in order
//	the pieces' data, in table order
//	envelope tag, 16 bytes, if sealed
//
// A ciphertext piece is AES-GCM under the job key, nonce encrypter ‖
// counter, with associated data binding the Gatherer, seq, algorithm,
// encrypter, counter and origins (pieceAAD): it may be forwarded as it
// is, so it binds no link. The envelope binds the link: a GCM tag under
// the key of the link src→dst over the header, the table and the
// pieces' tags (not their bodies: those are authenticated by their own
// tags), nonce src ‖ link counter. So a frame moved to another link,
// replayed, reordered or changed anywhere fails, and checking it costs
// one GHASH of a few hundred bytes, not a second pass over the data.
const (
	magic0, magic1 = 'S', 'E'
	frameVersion   = 1
	flagSealed     = 1
	hdrLen         = 96
	entryLen       = 24
	tagLen         = 16
	kindPlain      = 0
	kindSealed     = 1
)

// ErrFrame: a frame that does not parse, or holds other blocks than the
// step expects.
var ErrFrame = errors.New("encrypt: malformed frame")

// Header is a frame's fixed part.
type Header struct {
	Sealed   bool
	Alg      Algorithm
	Src, Dst int
	Seq      uint64
	Step     int
	LinkCtr  uint64
	Path     Counts
}

// Piece is a run of ranks' blocks in a frame, in the clear or sealed.
type Piece struct {
	Sealed    bool
	Origins   []int
	Encrypter int
	Counter   uint64
	Data      []byte // a ciphertext's ends with its tag
}

// Frame is a decoded frame; its pieces' data alias the bytes decoded.
type Frame struct {
	Header
	Pieces []Piece
	Tag    []byte // the envelope tag, if sealed
}

// Limits bound what DecodeFrame accepts, so that nothing it allocates is
// sized by the frame: the caller knows how many ranks there are and how
// many blocks the step brings.
type Limits struct {
	Ranks   int // origins, encrypters, src and dst are below this
	Origins int // the pieces hold at most this many origins in all
}

// maxFrameSize bounds the frame of a step that brings origins blocks of
// m bytes, in at most that many pieces (or one, if origins is 0).
func maxFrameSize(origins, m int) int {
	np := max(origins, 1)
	return hdrLen + np*(entryLen+tagLen) + origins*(4+m) + tagLen
}

// appendHeader appends h and the pieces table; the data follows.
func appendHeader(b []byte, h *Header, pieces []Piece) []byte {
	var flags byte
	if h.Sealed {
		flags |= flagSealed
	}
	b = append(b, magic0, magic1, frameVersion, flags, byte(h.Alg), 0, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(h.Src))
	b = binary.LittleEndian.AppendUint32(b, uint32(h.Dst))
	b = binary.LittleEndian.AppendUint64(b, h.Seq)
	b = binary.LittleEndian.AppendUint32(b, uint32(h.Step))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(pieces)))
	b = binary.LittleEndian.AppendUint64(b, h.LinkCtr)
	for _, v := range h.Path.words() {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	for _, pc := range pieces {
		kind := byte(kindPlain)
		if pc.Sealed {
			kind = kindSealed
		}
		b = append(b, kind, 0, 0, 0)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(pc.Origins)))
		b = binary.LittleEndian.AppendUint32(b, uint32(pc.Encrypter))
		b = binary.LittleEndian.AppendUint64(b, pc.Counter)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(pc.Data)))
		for _, o := range pc.Origins {
			b = binary.LittleEndian.AppendUint32(b, uint32(o))
		}
	}
	return b
}

// AppendFrame appends the encoding of f (its Tag, if sealed, must be
// 16 bytes).
func AppendFrame(b []byte, f *Frame) []byte {
	b = appendHeader(b, &f.Header, f.Pieces)
	for _, pc := range f.Pieces {
		b = append(b, pc.Data...)
	}
	if f.Sealed {
		b = append(b, f.Tag...)
	}
	return b
}

func frameErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFrame, fmt.Sprintf(format, args...))
}

// DecodeFrame parses b. It never allocates more than lim allows, and
// checks every length against b, every rank against lim.Ranks, that no
// origin comes twice, and that nothing follows the frame. It does not
// authenticate: the Gatherer does.
func DecodeFrame(b []byte, lim Limits) (*Frame, error) {
	if len(b) < hdrLen {
		return nil, frameErr("%d bytes, shorter than the %d-byte header", len(b), hdrLen)
	}
	if b[0] != magic0 || b[1] != magic1 {
		return nil, frameErr("bad magic %q", b[:2])
	}
	if b[2] != frameVersion {
		return nil, frameErr("version %d (this is %d)", b[2], frameVersion)
	}
	if b[3]&^flagSealed != 0 || b[5]|b[6]|b[7] != 0 {
		return nil, frameErr("unknown flags %#x %x", b[3], b[5:8])
	}
	f := &Frame{}
	f.Sealed = b[3]&flagSealed != 0
	f.Alg = Algorithm(b[4])
	if f.Alg < Naive || f.Alg > HS2 {
		return nil, frameErr("unknown algorithm %d", b[4])
	}
	le := binary.LittleEndian
	src, dst := le.Uint32(b[8:]), le.Uint32(b[12:])
	if int64(src) >= int64(lim.Ranks) || int64(dst) >= int64(lim.Ranks) {
		return nil, frameErr("ranks %d→%d of %d", src, dst, lim.Ranks)
	}
	f.Src, f.Dst = int(src), int(dst)
	f.Seq = le.Uint64(b[16:])
	f.Step = int(le.Uint32(b[24:]))
	np := le.Uint32(b[28:])
	f.LinkCtr = le.Uint64(b[32:])
	var w [7]uint64
	for i := range w {
		w[i] = le.Uint64(b[40+8*i:])
	}
	f.Path = countsOf(w)
	if int64(np) > int64(max(lim.Origins, 1)) {
		return nil, frameErr("%d pieces, at most %d expected", np, max(lim.Origins, 1))
	}
	end := len(b)
	if f.Sealed {
		if end-hdrLen < tagLen {
			return nil, frameErr("sealed, but no room for its tag")
		}
		end -= tagLen
		f.Tag = b[end:]
	}
	off := hdrLen
	f.Pieces = make([]Piece, np)
	lens := make([]uint32, np)
	seen := make(map[int]bool, min(lim.Origins, lim.Ranks))
	total := 0
	for i := range f.Pieces {
		if end-off < entryLen {
			return nil, frameErr("piece %d: table entry past the end", i)
		}
		e := b[off:]
		if e[0] > kindSealed || e[1]|e[2]|e[3] != 0 {
			return nil, frameErr("piece %d: unknown kind %d", i, e[0])
		}
		no, enc, dl := le.Uint32(e[4:]), le.Uint32(e[8:]), le.Uint32(e[20:])
		if int64(no) > int64(lim.Origins-total) {
			return nil, frameErr("piece %d: %d origins, at most %d expected in all", i, no, lim.Origins)
		}
		pc := Piece{Sealed: e[0] == kindSealed, Encrypter: int(enc), Counter: le.Uint64(e[12:])}
		if pc.Sealed && int64(enc) >= int64(lim.Ranks) {
			return nil, frameErr("piece %d: sealed by rank %d of %d", i, enc, lim.Ranks)
		}
		if !pc.Sealed && (enc != 0 || pc.Counter != 0) {
			return nil, frameErr("piece %d: plaintext with a nonce", i)
		}
		if pc.Sealed && dl < tagLen {
			return nil, frameErr("piece %d: a ciphertext of %d bytes, shorter than its tag", i, dl)
		}
		off += entryLen
		if int64(end-off) < 4*int64(no) {
			return nil, frameErr("piece %d: origins past the end", i)
		}
		pc.Origins = make([]int, no)
		for j := range pc.Origins {
			o := le.Uint32(b[off+4*j:])
			if int64(o) >= int64(lim.Ranks) {
				return nil, frameErr("piece %d: origin %d of %d ranks", i, o, lim.Ranks)
			}
			if seen[int(o)] {
				return nil, frameErr("piece %d: rank %d's block twice", i, o)
			}
			seen[int(o)] = true
			pc.Origins[j] = int(o)
		}
		total += int(no)
		off += 4 * int(no)
		f.Pieces[i] = pc
		lens[i] = dl
	}
	for i, dl := range lens {
		if int64(end-off) < int64(dl) {
			return nil, frameErr("piece %d: %d bytes of data, %d left", i, dl, end-off)
		}
		f.Pieces[i].Data = b[off : off+int(dl) : off+int(dl)]
		off += int(dl)
	}
	if off != end {
		return nil, frameErr("%d bytes after the last piece", end-off)
	}
	return f, nil
}

// aadHeader returns the part of an encoded frame that the envelope
// authenticates besides the pieces' tags: the header and the table.
func aadHeader(b []byte, f *Frame) []byte {
	n := hdrLen
	for _, pc := range f.Pieces {
		n += entryLen + 4*len(pc.Origins)
	}
	return b[:n]
}

// float bits for the path's time.
func f64bits(v float64) uint64 { return math.Float64bits(v) }
func f64from(u uint64) float64 { return math.Float64frombits(u) }
