package replicate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/csum"
)

// recvMsgPlusHash: the message from the same-numbered sender replica,
// the hash from the one before it in the ring (the paper's Figure 4).
func (c *Comm) recvMsgPlusHash(ctx context.Context, src, tag int, buf []byte) (channel.Status, error) {
	k, r := c.me.Replica, c.r
	dc, hc, wtag := c.route(tag)
	own := func(v int) int { return c.m.Native(v, k) }
	src, tag, st, err := c.first(ctx, dc, src, tag, wtag, buf, own)
	if err != nil && !errors.Is(err, channel.ErrTruncated) {
		return channel.Status{}, err
	}
	vst := channel.Status{Source: src, Tag: tag, Len: st.Len}
	if r == 1 {
		c.stats.compared(int(c.step.Load()))
		return vst, err
	}
	if tag == channel.AnyTag || src == channel.AnySource {
		panic("unreachable: wildcard left unresolved")
	}
	_, _, wtag = c.route(tag)
	var hb [hashSize]byte
	if _, herr := recvExact(ctx, hc, c.m.Native(src, (k-1+r)%r), wtag, hb[:]); herr != nil {
		return vst, herr
	}
	if err != nil { // truncated: the hash is taken so the streams stay in step
		return vst, err
	}
	h, err := decodeHash(hb[:])
	if err != nil {
		return vst, err
	}
	step := int(c.step.Load())
	mine := c.alg.Sum(buf[:st.Len])
	if h.Len == uint64(st.Len) && h.Hash == mine {
		c.stats.compared(step)
		return vst, nil
	}
	c.stats.mismatch(step)
	if c.cfg.detectOnly {
		// Against the reference (never injected): if this replica is not
		// it, its own sender's copy is the corrupt one; if it is, the
		// hash's sender's.
		bad := Place{src, k}
		if k == c.cfg.reference {
			bad.Replica = (k - 1 + r) % r
		}
		c.stats.blame(step, bad)
		c.stats.observed(step, k != c.cfg.reference)
		return vst, nil
	}
	if r == 2 {
		c.stats.uncorrectable(step)
		return vst, c.corruption(src, tag, h.Seq, ErrMismatch, "own copy %s, replica %d's hash %s", c.alg.Format(mine), (k+1)%r, c.alg.Format(h.Hash))
	}
	return vst, c.discover(ctx, src, tag, h.Seq, buf[:st.Len], mine, h.Hash, step)
}

// discover is the paper's correction (§III-B2) for r ≥ 3, made to vote.
// Receiver k found its copy (sender k's claim) and the hash of sender k-1
// disagree. A single corrupted sender replica j makes exactly receivers j
// (bad copy, good hash) and j+1 (good copy, bad hash) disagree, so each
// disagreeing receiver sends its two claims to both ring neighbours, and
// votes on the three claims it then holds with the first that answers.
// The claim that stands alone names the corrupted sender f:
//
//   - f = k: this copy is the bad one; receiver k+1 holds sender k+1's
//     good copy and sends it (verified against the winning hash here).
//   - f = k-1: this copy is good; receiver k-1 holds the bad one, and this
//     replica sends it the verified copy.
//
// Every disagreeing receiver ends by sending its lower neighbour one
// verdict, the copy or nothing, so that a receiver waiting for a copy
// never waits forever: with two corrupted replicas of three every
// receiver finds three different claims, and all of them fail with
// ErrNoMajority. No copy is accepted unless two sender replicas vouch
// for it.
func (c *Comm) discover(ctx context.Context, src, tag int, seq uint64, data []byte, mine, got csum.Value, step int) error {
	k, r, v := c.me.Replica, c.r, c.me.Virtual
	up, down := (k+1)%r, (k-1+r)%r
	id := msgID{src: src, tag: tag, seq: seq}
	c.box.expect(id, len(data))
	defer c.box.forget(id)

	rep := report{Src: src, Tag: tag, Seq: seq, Len: uint64(len(data)), Claims: [2]claim{{k, mine}, {down, got}}}
	var b [reportSize]byte
	for _, nb := range []int{down, up} {
		if err := c.repair.Send(ctx, c.m.Native(v, nb), tagReport, rep.put(b[:0])); err != nil {
			return err
		}
		c.stats.sent(reportSize)
	}
	theirs, err := c.box.waitReport(ctx, id, down, up)
	if err != nil {
		return err
	}
	sendVerdict := func(out uint8, payload []byte) error {
		vd := verdict{Src: src, Tag: tag, Seq: seq, From: k, Outcome: out, Len: uint64(len(payload))}
		var vb [verdictSize]byte
		// A verdict and its copy go out together: the receiver takes the
		// next copy from this replica as the verdict's, and two
		// discoveries (a halo from each side) may end at once.
		c.fixMu.Lock()
		defer c.fixMu.Unlock()
		if err := c.repair.Send(ctx, c.m.Native(v, down), tagVerdict, vd.put(vb[:0])); err != nil {
			return err
		}
		c.stats.sent(verdictSize)
		if out == outcomeCorrect {
			if err := c.fix.Send(ctx, c.m.Native(v, down), 0, payload); err != nil {
				return err
			}
			c.stats.sent(len(payload))
		}
		return nil
	}
	claims := map[int]csum.Value{k: mine, down: got}
	for _, cl := range theirs.Claims {
		if h, ok := claims[cl.Replica]; ok && h != cl.Hash {
			// A sender replica that sent two different things: not a
			// corrupted buffer, a broken replica; nothing to vote on.
			c.stats.uncorrectable(step)
			_ = sendVerdict(outcomeNone, nil)
			return c.corruption(src, tag, seq, ErrNoMajority, "replica %d's claims differ between receivers", cl.Replica)
		}
		claims[cl.Replica] = cl.Hash
	}
	win, odd, ok := single(claims)
	if !ok {
		c.stats.uncorrectable(step)
		if err := sendVerdict(outcomeNone, nil); err != nil {
			return err
		}
		return c.corruption(src, tag, seq, ErrNoMajority, "claims %s", formatClaims(c.alg, claims))
	}
	c.stats.blame(step, Place{src, odd})
	switch odd {
	case down: // sender k-1 is corrupt: receiver k-1 holds its copy
		return sendVerdict(outcomeCorrect, data)
	case k: // this copy is corrupt: receiver k+1 sends the verified one
		if err := sendVerdict(outcomeNone, nil); err != nil {
			return err
		}
		vd, fixed, err := c.box.waitVerdict(ctx, id, up)
		if err != nil {
			return err
		}
		if vd.Outcome != outcomeCorrect || len(fixed) != len(data) || c.alg.Sum(fixed) != win {
			c.stats.uncorrectable(step)
			return c.corruption(src, tag, seq, ErrNoMajority, "replica %d had no verified copy to send", up)
		}
		copy(data, fixed)
		c.stats.corrected(step, k != c.cfg.reference)
		return nil
	}
	// The odd claim is the neighbour's other sender: this receiver's two
	// claims agree, which a mismatch excludes.
	c.stats.uncorrectable(step)
	_ = sendVerdict(outcomeNone, nil)
	return c.corruption(src, tag, seq, ErrNoMajority, "inconsistent claims %s", formatClaims(c.alg, claims))
}

// single finds the pattern one corrupted sender leaves: every claim but
// one agrees (at least two agreeing). It returns the agreed hash and the
// replica whose claim stands alone.
func single(claims map[int]csum.Value) (win csum.Value, odd int, ok bool) {
	count := map[csum.Value]int{}
	for _, h := range claims {
		count[h]++
	}
	if len(count) != 2 {
		return csum.Value{}, 0, false
	}
	for h, n := range count {
		if n >= 2 {
			win = h
		}
	}
	if count[win] != len(claims)-1 {
		return csum.Value{}, 0, false
	}
	for k, h := range claims {
		if h != win {
			odd = k
		}
	}
	return win, odd, true
}

func formatClaims(alg *csum.Algorithm, claims map[int]csum.Value) string {
	s := ""
	for _, k := range slices.Sorted(maps.Keys(claims)) {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("replica %d %s", k, alg.Format(claims[k]))
	}
	return s
}
