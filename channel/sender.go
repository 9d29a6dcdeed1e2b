package channel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sigcheck/sigcheck/channel/transport"
	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/internal/wire"
	"github.com/sigcheck/sigcheck/tree"
)

// The sender's side of the protection protocol: a protected send
// (sendProtected) transmits its message (transmit.go), then serves its
// receiver until the verdict — resending what it asks for, answering its
// descent, probing when it hears nothing — or returns early, eager, and
// leaves that to the engine (pending.go). The receiver's side is guard.go;
// the payloads they exchange are protocol.go's.

// probeFirst and probeMax time the sender's probes: a protected send
// that has heard nothing from its receiver for probeFirst after its last
// frame asks again (KindAgain), as if a control frame had come
// corrupted; the receiver answers with its last control frame or, if it
// has said nothing yet, takes the rest of the message as lost (links
// keep order: every frame sent before the probe has come) and asks for
// it. The wait doubles up to 8 times the first (WithProbe); after
// maxProbes unanswered the send ends with ErrSilent (about 7.75 s at the
// default wait). One lost frame costs one round trip after the timer,
// not a deadline.
const (
	DefaultProbe = 250 * time.Millisecond
	maxProbes    = 6
)

// sender is one protected send in progress.
type sender struct {
	e     *engine
	p     *protection
	dst   int
	h     wire.Header // the message's header (kind, offset, length vary)
	data  []byte
	alg   *csum.Algorithm
	t     *tree.Tree
	last  ctlFrame // the last control frame sent, for KindAgain
	stamp []byte   // the datatype stamp sent ahead of the message, if any (asked again)
	eager bool     // data is the sender's own copy (eager send)
	own   *[]byte  // that copy, as eagerCopies keeps it
	pre   preHash  // its checks, computed before its turn, if they were
	// rootBuf holds the trailer's root, which last keeps for KindAgain.
	rootBuf [3 + 16]byte
	ps      pending // its state in e.sends: one allocation for both
	// inCall, if set, is the transport whose delivery of the message's
	// only frame had the receiver verify it (frameOne): the send is over.
	inCall transport.Caller
	first  bool // in sendProtectedIn's transmit: frameOne may set inCall
}

// Eager protected sends: a message of up to EagerLimit bytes is copied
// (the sender's retransmission buffer) and Send returns once its frames
// are out, as MPI's eager sends return before the receiver has the
// message; the receiver's verdict is handled in the background. Without
// this, a small protected message costs a second one-way trip (the
// verdict) on the sender's side of every ping-pong. Larger messages
// wait for the verdict, repairing from the caller's buffer. At most
// eagerBudget bytes of copies are kept per rank; beyond, sends wait.
const (
	EagerLimit  = 64 << 10
	eagerBudget = 16 << 20
)

func (e *engine) sendProtected(ctx context.Context, p *protection, ctxID uint32, dst int, tag int64, data, stamp []byte) error {
	return e.sendProtectedIn(ctx, e.turnFor(dst), p, ctxID, dst, tag, data, stamp)
}

// sendProtectedIn is sendProtected in the turn of ticket t, which it
// ends once the message's frames are out (or gives up).
func (e *engine) sendProtectedIn(ctx context.Context, t ticket, p *protection, ctxID uint32, dst int, tag int64, data, stamp []byte) error {
	if dst == e.rank { // nothing crosses a wire
		return e.sendIn(ctx, t, ctxID, dst, tag, data, stamp)
	}
	var pre preHash
	if t.q != nil {
		// A send posted behind others (Isend) hashes while it waits for
		// its turn, on a processor the writes before it leave idle.
		pre.compute(e, p, data)
	}
	if err := t.wait(ctx); err != nil {
		return err
	}
	if err := e.ready(ctx, dst); err != nil {
		t.done()
		return err
	}
	id := e.nextID.Add(1)
	e.mu.Lock()
	s := newSender()
	s.e, s.p, s.dst, s.data, s.stamp, s.pre = e, p, dst, data, stamp, pre
	s.h = wire.Header{Kind: wire.KindMsg, Ctx: ctxID, Tag: tag, ID: id, Total: int64(len(data)), Seq: e.nextSeq(dst, ctxID)}
	ps := &s.ps
	ps.init(dst)
	e.sends[id] = ps
	e.mu.Unlock()
	err := e.sendStamp(ctx, dst, &s.h, stamp)
	if err == nil {
		s.first = true // frameOne may end it in the call
		err = s.transmit(ctx)
		s.first = false
	}
	t.done() // its frames are out: the next send to dst may write
	if lt := s.inCall; lt != nil {
		// Verified as its frame was delivered: it returns nil whatever
		// came since — its peer lost just after, say, which failed the
		// pending send meanwhile — since the message was received. (The
		// OK handed to the engine, as before frameOne, made such a send
		// fail if it was eager.)
		e.mu.Lock()
		if e.sends[id] == ps {
			delete(e.sends, id)
		}
		e.mu.Unlock()
		lt.Handed()
		recycleSender(s)
		e.stats.sent(len(data))
		return nil
	}
	if err != nil && !errors.Is(err, ErrPeerLost) {
		// Its opener may not have gone: the receiver, which matches this
		// sender's messages in order, is told to pass over it.
		e.abandon(dst, &s.h)
	}
	if err == nil && len(data) <= EagerLimit {
		var left bool
		if left, err = s.leave(ps); left {
			e.stats.sent(len(data))
			return nil
		}
	}
	if err == nil {
		err = s.await(ctx, ps)
	}
	s.finish(ps)
	if err != nil {
		return err
	}
	e.stats.sent(len(data))
	return nil
}

// leave ends the call of an eager send (of up to EagerLimit bytes, its
// frames out): at once if its receiver has verified it already — in
// process it always has: the verdict comes back inside the last frame's
// write (a one-frame send has ended before, frameOne) — else with a copy
// of its data, which serves the receiver's repairs once the caller has
// its buffer back; the copy is counted in eagerBytes. It reports false, with the send's error if it failed
// meanwhile, when the send is to wait for its verdict instead: the
// copies kept are at eagerBudget, or it was verified or failed while the
// copy was made. A send that left is not to be used by the caller after.
func (s *sender) leave(ps *pending) (bool, error) {
	e := s.e
	ps.mu.Lock()
	verified := ps.verified // and out of e.sends: nothing else is queued, nothing fails it
	ps.mu.Unlock()
	if verified {
		recycleSender(s) // out of e.sends, and no goroutine serves it
		return true, nil
	}
	n := int64(len(s.data))
	if e.eagerBytes.Add(n) > eagerBudget {
		e.eagerBytes.Add(-n)
		return false, nil
	}
	s.eager = true // its bytes are counted in eagerBytes (finish, eagerEnd)
	own := eagerCopy(s.data)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := ps.err; err != nil || e.sends[s.h.ID] != ps {
		keepEagerCopy(own) // failed, or verified (over TCP), meanwhile: await says which
		return false, err
	}
	s.data, s.own = *own, own // nothing reads them yet: ps.eager is not set
	ps.eager = s
	e.eagerN++
	if len(ps.q) > 0 { // the receiver has spoken, and not "OK" (that first would have verified it)
		ps.started = true
		go s.background(ps)
	} else {
		ps.since = time.Now()
		e.watchEager()
	}
	return true, nil
}

// finish forgets a send that its own goroutine served to the end: its
// pending state and its eager copy; s is recycled, and not to be used
// after.
func (s *sender) finish(ps *pending) {
	e := s.e
	if s.eager {
		e.eagerBytes.Add(-int64(len(s.data)))
	}
	e.mu.Lock()
	if e.sends[s.h.ID] == ps {
		delete(e.sends, s.h.ID)
	}
	e.mu.Unlock()
	recycleSender(s)
}

// background serves an eager send's receiver after Send has returned.
// A failure is the receiver's to report (its Recv fails); the sender
// counts it (Stats.Unrepaired) and Flush returns it.
func (s *sender) background(ps *pending) {
	err := s.await(context.Background(), ps)
	s.e.mu.Lock()
	s.e.eagerEnd(s.h.ID, ps, err)
	s.e.mu.Unlock()
}

// await serves the receiver until its verdict: answers to its descent,
// resent parts, its control frames asked again when they came corrupted.
// The exchanges are bounded, so that a link that corrupts everything
// ends in ErrCorrupted, never in an endless conversation.
func (s *sender) await(ctx context.Context, ps *pending) error {
	pr := s.e.caps.progress // the receiver's word is read as it comes (next)
	limit := 64 + 8*s.p.rounds
	if s.p.mode == modeMerkle {
		limit += 4 * treeDepth(int64(len(s.data)), s.p.seg) * s.p.rounds
	}
	first := s.e.probe
	wait, probes := first, 0
	for n := 0; n <= limit; n++ {
		ev, err := ps.next(ctx, pr, s.e.ctl, wait)
		if errors.Is(err, errNoWord) {
			if probes++; probes > maxProbes {
				s.e.abandon(s.dst, &s.h)
				return fmt.Errorf("%w after %d probes (message %d to rank %d; it may have arrived)", ErrSilent, maxProbes, s.h.ID, s.dst)
			}
			wait = min(2*wait, 8*first)
			h := s.ctlHeader(wire.KindAgain)
			h.Offset = againToReceiver
			if err := s.control(ctx, h, nil, false); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				s.e.abandon(s.dst, &s.h)
			}
			return err
		}
		wait, probes = first, 0
		if !ev.ok { // counted on arrival
			h := s.ctlHeader(wire.KindAgain)
			h.Offset = againToReceiver
			if err := s.control(ctx, h, nil, false); err != nil {
				return err
			}
			continue
		}
		switch ev.kind {
		case wire.KindVerdict:
			done, err := s.verdict(ctx, ev.payload)
			if done || err != nil {
				return err
			}
		case wire.KindAsk:
			if err := s.ask(ctx, ev.payload, ev.off); err != nil {
				return err
			}
		case wire.KindAgain:
			if s.last.payload == nil && s.last.h.Kind == 0 {
				continue
			}
			h := s.last.h
			if err := s.e.frame(ctx, s.dst, &h, s.last.payload); err != nil {
				return err
			}
		}
	}
	s.e.abandon(s.dst, &s.h)
	return fmt.Errorf("%w: message %d to rank %d: no verdict after %d exchanges", ErrCorrupted, s.h.ID, s.dst, limit)
}

// verdict acts on the receiver's verdict; done when the transfer is over.
func (s *sender) verdict(ctx context.Context, b []byte) (done bool, err error) {
	if len(b) == 0 {
		return true, fmt.Errorf("%w: empty verdict from rank %d", ErrProtocol, s.dst)
	}
	switch b[0] {
	case verdictOK:
		return true, nil
	case verdictFail:
		return true, fmt.Errorf("%w: rank %d gave up on message %d", ErrCorrupted, s.dst, s.h.ID)
	case verdictUnknown:
		// Its first frame was lost: the whole message again, under the
		// same id (the receiver opens it as new).
		s.e.stats.resent.Add(uint64(len(s.data)))
		if err := s.e.sendStamp(ctx, s.dst, &s.h, s.stamp); err != nil {
			return true, err
		}
		return false, s.transmit(ctx)
	case verdictDiscarded:
		return true, &DiscardError{Rank: s.dst, ID: s.h.ID, Why: discardWhy(b)}
	case verdictRanges, verdictSegments:
		ranges, err := s.parseResend(b)
		if err != nil {
			return true, err
		}
		for _, r := range ranges {
			for off := r[0]; off < r[0]+r[1]; {
				n := min(r[0]+r[1]-off, int64(MaxFrame))
				h := s.ctlHeader(wire.KindRepair)
				h.Offset, h.Plen = off, int(n)
				p := s.data[off : off+n]
				if s.alg != nil {
					h.Flags, h.Sum = s.p.algIdx, fold(s.alg.Sum(p))
				}
				if err := s.e.frame(ctx, s.dst, &h, p); err != nil {
					return true, err
				}
				s.e.stats.resent.Add(uint64(n))
				off += n
			}
		}
		return false, nil
	}
	return true, fmt.Errorf("%w: verdict %d from rank %d", ErrProtocol, b[0], s.dst)
}

// parseResend reads the parts a verdict asks for as byte ranges, checking
// each against the message (a peer's word is not trusted for sizes).
func (s *sender) parseResend(b []byte) ([][2]int64, error) {
	parts, err := decodeResend(b)
	if err != nil {
		return nil, fmt.Errorf("%w: resend list from rank %d: %v", ErrProtocol, s.dst, err)
	}
	total := int64(len(s.data))
	out := make([][2]int64, 0, len(parts))
	for _, part := range parts {
		a, l := part[0], part[1]
		switch b[0] {
		case verdictRanges:
			if a > uint64(total) || l == 0 || l > uint64(total)-a {
				return nil, fmt.Errorf("%w: rank %d asks for bytes %d+%d of %d", ErrProtocol, s.dst, a, l, total)
			}
			out = append(out, [2]int64{int64(a), int64(l)})
		default:
			t := s.merkleTree()
			if t == nil || a >= uint64(t.Segments()) {
				return nil, fmt.Errorf("%w: rank %d asks for segment %d", ErrProtocol, s.dst, a)
			}
			off, sn := t.SegmentRange(int(a))
			out = append(out, [2]int64{off, max(sn, 0)})
		}
	}
	return slices.DeleteFunc(out, func(r [2]int64) bool { return r[1] == 0 }), nil
}

// ask answers the receiver's descent.
func (s *sender) ask(ctx context.Context, b []byte, asked int64) error {
	if len(b) > 0 && b[0] == askStamp {
		if s.stamp == nil {
			return fmt.Errorf("%w: rank %d asks for the stamp of a message without one", ErrProtocol, s.dst)
		}
		return s.e.sendStamp(ctx, s.dst, &s.h, s.stamp)
	}
	t := s.merkleTree()
	if t == nil || len(b) == 0 {
		return fmt.Errorf("%w: a question from rank %d about a message without a tree", ErrProtocol, s.dst)
	}
	if b[0] == askRoot {
		return s.sendTrailer(ctx)
	}
	var q tree.Request
	if err := q.UnmarshalBinary(b[1:]); err != nil {
		return err
	}
	a, err := t.Answer(q)
	if err != nil {
		return err
	}
	h := s.ctlHeader(wire.KindAnswer)
	h.Offset = asked // the question's number, which the receiver checks
	return s.control(ctx, h, a.AppendBinary(nil, t.Hash().Size()), true)
}
