package replicate

import (
	"context"
	"errors"
	"fmt"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/csum"
)

// recvAllToAll takes one copy from every replica of the sender (the
// paper's Figure 2), its own replica's straight into buf, and votes.
func (c *Comm) recvAllToAll(ctx context.Context, src, tag int, buf []byte) (channel.Status, error) {
	k, r := c.me.Replica, c.r
	dc, _, wtag := c.route(tag)
	// The first copy goes into buf: the own replica's, or for a wildcard
	// at replica 0 whichever replica's arrived first.
	firstFrom := k
	any := func(v int) int { return c.m.Native(v, k) }
	src, tag, st, err := c.first(ctx, dc, src, tag, wtag, buf, any)
	if err != nil && !errors.Is(err, channel.ErrTruncated) {
		return channel.Status{}, err
	}
	truncated := err
	if st.Source >= 0 && st.Source < len(c.m.places) {
		firstFrom = c.m.Place(st.Source).Replica
	}
	_, _, wtag = c.route(tag)
	vst := channel.Status{Source: src, Tag: tag, Len: st.Len}
	copies := make([][]byte, r)
	lens := make([]int, r)
	copies[firstFrom], lens[firstFrom] = buf, st.Len
	var reqs []*channel.Request
	idx := []int{}
	for j := range r {
		if j == firstFrom {
			continue
		}
		copies[j] = make([]byte, len(buf))
		reqs = append(reqs, channel.Irecv(ctx, dc, c.m.Native(src, j), wtag, copies[j]))
		idx = append(idx, j)
	}
	var firstErr error
	for i, q := range reqs {
		s, err := q.Wait()
		lens[idx[i]] = s.Len
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if truncated != nil {
		return vst, truncated
	}
	if firstErr != nil {
		return vst, firstErr
	}
	step := int(c.step.Load())
	type key struct {
		h csum.Value
		n int
	}
	keys := make([]key, r)
	count := map[key]int{}
	for j := range r {
		keys[j] = key{c.alg.Sum(copies[j][:lens[j]]), lens[j]}
		count[keys[j]]++
	}
	if len(count) == 1 {
		c.stats.compared(step)
		if firstFrom != k { // a wildcard's first copy came from another replica: same bytes
			vst.Len = lens[k]
		}
		return vst, nil
	}
	c.stats.mismatch(step)
	if c.cfg.detectOnly {
		for j := range r {
			if keys[j] != keys[c.cfg.reference] {
				c.stats.blame(step, Place{src, j})
			}
		}
		if firstFrom != k {
			copy(buf, copies[k][:lens[k]])
		}
		vst.Len = lens[k]
		c.stats.observed(step, keys[k] != keys[c.cfg.reference])
		return vst, nil
	}
	// Plurality: the copy more replicas sent than any other, whichever
	// arrived first; at least two must agree.
	var best key
	bestN, tie := 0, false
	for j := range r {
		n := count[keys[j]]
		switch {
		case n > bestN:
			best, bestN, tie = keys[j], n, false
		case n == bestN && keys[j] != best:
			tie = true
		}
	}
	if r == 2 {
		c.stats.uncorrectable(step)
		return vst, c.corruption(src, tag, 0, ErrMismatch, "replica 0 %s (%d bytes), replica 1 %s (%d bytes)", c.alg.Format(keys[0].h), keys[0].n, c.alg.Format(keys[1].h), keys[1].n)
	}
	if tie || bestN < 2 {
		c.stats.uncorrectable(step)
		return vst, c.corruption(src, tag, 0, ErrNoMajority, "%d different copies from %d replicas, the most common sent by %d", len(count), r, bestN)
	}
	win := 0
	for j := range r {
		if keys[j] == best {
			win = j
			break
		}
	}
	for j := range r {
		if keys[j] != best {
			c.stats.blame(step, Place{src, j})
		}
	}
	if keys[firstFrom] != best {
		copy(buf, copies[win][:best.n])
	}
	vst.Len = best.n
	if keys[k] != best {
		c.stats.corrected(step, k != c.cfg.reference)
	}
	if best.n > len(buf) {
		return vst, fmt.Errorf("%w: %d bytes into %d", channel.ErrTruncated, best.n, len(buf))
	}
	return vst, nil
}
