package replicate

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sigcheck/sigcheck/csum"
)

// The wire format of the replication protocols' own messages. The user's
// bytes travel as they are (no header, no copy); everything else is one
// of the fixed-size records below, little-endian, each with a kind byte
// first so that a record sent on the wrong tag is refused, not misread.
//
//	hash    'H' seq:u64 len:u64 hash:hi u64,lo u64               33 bytes
//	report  'R' src:u32 tag:u32 seq:u64 len:u64 2×(replica:u32 hash:16)  65 bytes
//	verdict 'V' src:u32 tag:u32 seq:u64 from:u32 outcome:u8 len:u64      30 bytes
//	envelope 'E' src:u32 tag:u32                                 9 bytes
//	word    'W' value:u64 (clock, seed, test answers)            9 bytes
//
// seq numbers the messages from one virtual rank to another with one tag,
// identically on every replica since replicas send the same messages in
// the same order (per destination and tag, which is all MPI orders too);
// (src, tag, seq) names a message in a report or a verdict.

// maxWireTag bounds the tags records name: user tags and those of the
// collectives, which sit just above channel.ReservedTag.
const maxWireTag = 1 << 31

// Record sizes.
const (
	hashSize     = 1 + 8 + 8 + 16
	reportSize   = 1 + 4 + 4 + 8 + 8 + 2*(4+16)
	verdictSize  = 1 + 4 + 4 + 8 + 4 + 1 + 8
	envelopeSize = 1 + 4 + 4
	wordSize     = 1 + 8
	maxRecord    = reportSize
)

// ErrWire: a replication record that does not decode (wrong size, kind,
// or a field out of range). It means a peer of the job is broken, or
// not running this protocol.
var ErrWire = errors.New("replicate: malformed protocol record")

// hashRec is what a sender's ring neighbour sends beside the message
// itself (MsgPlusHash): the message's hash and length.
type hashRec struct {
	Seq  uint64
	Len  uint64
	Hash csum.Value
}

func (h hashRec) put(b []byte) []byte {
	b = append(b, 'H')
	b = binary.LittleEndian.AppendUint64(b, h.Seq)
	b = binary.LittleEndian.AppendUint64(b, h.Len)
	b = binary.LittleEndian.AppendUint64(b, h.Hash.Hi)
	return binary.LittleEndian.AppendUint64(b, h.Hash.Lo)
}

func decodeHash(b []byte) (hashRec, error) {
	if len(b) != hashSize || b[0] != 'H' {
		return hashRec{}, fmt.Errorf("%w: hash record of %d bytes, kind %q", ErrWire, len(b), kindOf(b))
	}
	return hashRec{
		Seq:  binary.LittleEndian.Uint64(b[1:]),
		Len:  binary.LittleEndian.Uint64(b[9:]),
		Hash: csum.Value{Hi: binary.LittleEndian.Uint64(b[17:]), Lo: binary.LittleEndian.Uint64(b[25:])},
	}, nil
}

// claim is what one sender replica says a message is: the hash of the
// copy it sent.
type claim struct {
	Replica int
	Hash    csum.Value
}

// report is what a receiver replica that found a mismatch tells its ring
// neighbours (the paper's discovery probe): the two claims it holds, its
// own copy's and the hash it got from the previous sender replica.
type report struct {
	Src    int // virtual rank of the message's sender
	Tag    int
	Seq    uint64
	Len    uint64
	Claims [2]claim
}

func (r report) put(b []byte) []byte {
	b = append(b, 'R')
	b = binary.LittleEndian.AppendUint32(b, uint32(r.Src))
	b = binary.LittleEndian.AppendUint32(b, uint32(r.Tag))
	b = binary.LittleEndian.AppendUint64(b, r.Seq)
	b = binary.LittleEndian.AppendUint64(b, r.Len)
	for _, c := range r.Claims {
		b = binary.LittleEndian.AppendUint32(b, uint32(c.Replica))
		b = binary.LittleEndian.AppendUint64(b, c.Hash.Hi)
		b = binary.LittleEndian.AppendUint64(b, c.Hash.Lo)
	}
	return b
}

// decodeReport decodes a report from a job of n virtual ranks and r
// replicas: ranks and replicas out of range are refused.
func decodeReport(b []byte, n, r int) (report, error) {
	if len(b) != reportSize || b[0] != 'R' {
		return report{}, fmt.Errorf("%w: report of %d bytes, kind %q", ErrWire, len(b), kindOf(b))
	}
	rep := report{
		Src: int(binary.LittleEndian.Uint32(b[1:])),
		Tag: int(binary.LittleEndian.Uint32(b[5:])),
		Seq: binary.LittleEndian.Uint64(b[9:]),
		Len: binary.LittleEndian.Uint64(b[17:]),
	}
	if rep.Src < 0 || rep.Src >= n { // negative: over 2^31 on 32-bit machines
		return report{}, fmt.Errorf("%w: report names virtual rank %d of %d", ErrWire, rep.Src, n)
	}
	if rep.Tag < 0 || int64(rep.Tag) >= maxWireTag {
		return report{}, fmt.Errorf("%w: report names tag %d", ErrWire, rep.Tag)
	}
	p := b[25:]
	for i := range rep.Claims {
		k := binary.LittleEndian.Uint32(p)
		if int64(k) >= int64(r) {
			return report{}, fmt.Errorf("%w: report claim %d names replica %d of %d", ErrWire, i, k, r)
		}
		rep.Claims[i] = claim{Replica: int(k), Hash: csum.Value{Hi: binary.LittleEndian.Uint64(p[4:]), Lo: binary.LittleEndian.Uint64(p[12:])}}
		p = p[20:]
	}
	if rep.Claims[0].Replica == rep.Claims[1].Replica {
		return report{}, fmt.Errorf("%w: report holds two claims of replica %d", ErrWire, rep.Claims[0].Replica)
	}
	return rep, nil
}

// Outcomes of a receiver's discovery, sent to its lower ring neighbour.
const (
	outcomeNone    = 0 // nothing for you: I found no majority, or you are not the one corrupted
	outcomeCorrect = 1 // the verified message follows on the correction context
)

// verdict ends a receiver replica's part in a discovery; with
// outcomeCorrect, Len bytes of the winning copy follow.
type verdict struct {
	Src     int
	Tag     int
	Seq     uint64
	From    int // replica that sends it
	Outcome uint8
	Len     uint64
}

func (v verdict) put(b []byte) []byte {
	b = append(b, 'V')
	b = binary.LittleEndian.AppendUint32(b, uint32(v.Src))
	b = binary.LittleEndian.AppendUint32(b, uint32(v.Tag))
	b = binary.LittleEndian.AppendUint64(b, v.Seq)
	b = binary.LittleEndian.AppendUint32(b, uint32(v.From))
	b = append(b, v.Outcome)
	return binary.LittleEndian.AppendUint64(b, v.Len)
}

func decodeVerdict(b []byte, n, r int) (verdict, error) {
	if len(b) != verdictSize || b[0] != 'V' {
		return verdict{}, fmt.Errorf("%w: verdict of %d bytes, kind %q", ErrWire, len(b), kindOf(b))
	}
	v := verdict{
		Src:     int(binary.LittleEndian.Uint32(b[1:])),
		Tag:     int(binary.LittleEndian.Uint32(b[5:])),
		Seq:     binary.LittleEndian.Uint64(b[9:]),
		From:    int(binary.LittleEndian.Uint32(b[17:])),
		Outcome: b[21],
		Len:     binary.LittleEndian.Uint64(b[22:]),
	}
	switch {
	case v.Src < 0 || v.Src >= n: // negative: over 2^31 on 32-bit machines
		return verdict{}, fmt.Errorf("%w: verdict names virtual rank %d of %d", ErrWire, v.Src, n)
	case v.Tag < 0 || int64(v.Tag) >= maxWireTag:
		return verdict{}, fmt.Errorf("%w: verdict names tag %d", ErrWire, v.Tag)
	case v.From < 0 || v.From >= r:
		return verdict{}, fmt.Errorf("%w: verdict from replica %d of %d", ErrWire, v.From, r)
	case v.Outcome > outcomeCorrect:
		return verdict{}, fmt.Errorf("%w: verdict outcome %d", ErrWire, v.Outcome)
	case v.Outcome == outcomeNone && v.Len != 0:
		return verdict{}, fmt.Errorf("%w: verdict without data announces %d bytes", ErrWire, v.Len)
	}
	return v, nil
}

// envelope resolves a wildcard receive: the lowest replica tells the
// others which (source, tag) it matched.
type envelope struct{ Src, Tag int }

func (e envelope) put(b []byte) []byte {
	b = append(b, 'E')
	b = binary.LittleEndian.AppendUint32(b, uint32(e.Src))
	return binary.LittleEndian.AppendUint32(b, uint32(e.Tag))
}

// decodeEnvelope refuses a source outside the n virtual ranks and a tag
// outside 0 ≤ tag < maxTag.
func decodeEnvelope(b []byte, n int, maxTag int64) (envelope, error) {
	if len(b) != envelopeSize || b[0] != 'E' {
		return envelope{}, fmt.Errorf("%w: envelope of %d bytes, kind %q", ErrWire, len(b), kindOf(b))
	}
	e := envelope{Src: int(binary.LittleEndian.Uint32(b[1:])), Tag: int(binary.LittleEndian.Uint32(b[5:]))}
	if e.Src < 0 || e.Src >= n || e.Tag < 0 || int64(e.Tag) >= maxTag { // negative: over 2^31 on 32-bit machines
		return envelope{}, fmt.Errorf("%w: envelope (source %d, tag %d) out of range", ErrWire, e.Src, e.Tag)
	}
	return e, nil
}

func putWord(b []byte, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(append(b, 'W'), v)
}

func decodeWord(b []byte) (uint64, error) {
	if len(b) != wordSize || b[0] != 'W' {
		return 0, fmt.Errorf("%w: word of %d bytes, kind %q", ErrWire, len(b), kindOf(b))
	}
	return binary.LittleEndian.Uint64(b[1:]), nil
}

func kindOf(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return string(b[:1])
}

// Record is one decoded protocol record, for tools and the fuzz target:
// Append encodes it back, byte for byte.
type Record interface {
	Append(b []byte) []byte
	String() string
}

type (
	hashRecord     struct{ hashRec }
	reportRecord   struct{ report }
	verdictRecord  struct{ verdict }
	envelopeRecord struct{ envelope }
	wordRecord     uint64
)

func (r hashRecord) Append(b []byte) []byte     { return r.put(b) }
func (r reportRecord) Append(b []byte) []byte   { return r.put(b) }
func (r verdictRecord) Append(b []byte) []byte  { return r.put(b) }
func (r envelopeRecord) Append(b []byte) []byte { return r.put(b) }
func (r wordRecord) Append(b []byte) []byte     { return putWord(b, uint64(r)) }
func (r hashRecord) String() string             { return fmt.Sprintf("hash %+v", r.hashRec) }
func (r reportRecord) String() string           { return fmt.Sprintf("report %+v", r.report) }
func (r verdictRecord) String() string          { return fmt.Sprintf("verdict %+v", r.verdict) }
func (r envelopeRecord) String() string         { return fmt.Sprintf("envelope %+v", r.envelope) }
func (r wordRecord) String() string             { return fmt.Sprintf("word %d", uint64(r)) }

// DecodeRecord decodes any record of a job of n virtual ranks and r
// replicas by its kind byte, with the checks the protocol applies.
func DecodeRecord(b []byte, n, r int) (Record, error) {
	switch kindOf(b) {
	case "H":
		h, err := decodeHash(b)
		return hashRecord{h}, err
	case "R":
		rep, err := decodeReport(b, n, r)
		return reportRecord{rep}, err
	case "V":
		v, err := decodeVerdict(b, n, r)
		return verdictRecord{v}, err
	case "E":
		e, err := decodeEnvelope(b, n, maxWireTag)
		return envelopeRecord{e}, err
	case "W":
		w, err := decodeWord(b)
		return wordRecord(w), err
	}
	return nil, fmt.Errorf("%w: %d bytes of unknown kind %q", ErrWire, len(b), kindOf(b))
}
