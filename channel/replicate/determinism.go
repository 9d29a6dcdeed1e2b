package replicate

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"time"

	"github.com/sigcheck/sigcheck/channel"
)

// The paper's §III-C: what could make replicas diverge is decided by
// replica 0 and forwarded, so that every replica computes the same.

// share gives every replica of this virtual rank replica 0's value of
// read().
func (c *Comm) share(ctx context.Context, tag int, read func() uint64) (uint64, error) {
	var b [wordSize]byte
	if c.me.Replica == 0 {
		v := read()
		for k := 1; k < c.r; k++ {
			if err := c.ctl.Send(ctx, c.m.Native(c.me.Virtual, k), tag, putWord(b[:0], v)); err != nil {
				return 0, err
			}
			c.stats.sent(wordSize)
		}
		return v, nil
	}
	if _, err := recvExact(ctx, c.ctl, c.m.Native(c.me.Virtual, 0), tag, b[:]); err != nil {
		return 0, err
	}
	return decodeWord(b[:])
}

// Wtime is MPI_Wtime made deterministic: replica 0 reads the clock and
// the other replicas of its virtual rank get the same reading, so that a
// decision taken on the time (or a seed drawn from it) is the same on
// all of them. Every replica of a rank must call it at the same point.
func (c *Comm) Wtime(ctx context.Context) (time.Time, error) {
	v, err := c.share(ctx, tagClock, func() uint64 { return uint64(time.Now().UnixNano()) })
	return time.Unix(0, int64(v)), err
}

// Seed is a random seed, the same on every replica of this virtual rank
// (drawn by replica 0 from crypto/rand).
func (c *Comm) Seed(ctx context.Context) (uint64, error) {
	return c.share(ctx, tagSeed, func() uint64 {
		var b [8]byte
		rand.Read(b[:])
		return binary.LittleEndian.Uint64(b[:])
	})
}

// Test is MPI_Test made deterministic, the paper's rule for probes and
// tests: replica 0 looks whether req is done and tells the others; if it
// was, they wait for theirs (it finishes soon, since every replica runs
// the same transfers), so all replicas see the same answer.
func (c *Comm) Test(ctx context.Context, req *channel.Request) (bool, error) {
	v, err := c.share(ctx, tagTest, func() uint64 {
		select {
		case <-req.Done():
			return 1
		default:
			return 0
		}
	})
	if err != nil || v == 0 {
		return false, err
	}
	select {
	case <-req.Done():
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// Testany is MPI_Testany under the same rule: the index of a finished
// request as replica 0 saw it, or -1.
func (c *Comm) Testany(ctx context.Context, reqs []*channel.Request) (int, error) {
	v, err := c.share(ctx, tagTest, func() uint64 {
		for i, r := range reqs {
			select {
			case <-r.Done():
				return uint64(i) + 1
			default:
			}
		}
		return 0
	})
	if err != nil || v == 0 {
		return -1, err
	}
	if v > uint64(len(reqs)) {
		return -1, ErrWire
	}
	i := int(v - 1)
	select {
	case <-reqs[i].Done():
		return i, nil
	case <-ctx.Done():
		return -1, ctx.Err()
	}
}
