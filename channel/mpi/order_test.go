//go:build mpi

package mpi_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/sigcheck/sigcheck/channel"
)

// MPI's non-overtaking rule over this transport's three ways of sending:
// rank 0 sends rank 1 messages on one tag by Isend and Send in turn —
// small ones that Isend sends before it returns (TrySend), larger ones
// whose turn passes while their payload is still being read (Post), and
// ones of several frames — and rank 1 takes them with receives posted
// ahead (Irecv) and blocking ones in turn. The k-th message sent is the
// k-th received, and its bytes are the ones sent.
func TestIsendOrder(t *testing.T) {
	ep, ctx := job(t)
	props := gopter.NewProperties(params(12))
	props.Property("the k-th message sent is the k-th received", prop.ForAll(
		func(n int, seed uint64) string {
			if ep.Rank() > 1 {
				return ""
			}
			rng := rand.New(rand.NewPCG(seed, 7))
			sizes := make([]int, n)
			for k := range sizes {
				sizes[k] = waySizes[rng.IntN(len(waySizes))]
			}
			msg := func(k int) []byte {
				m := pattern(max(8, sizes[k]), seed+uint64(k))
				binary.LittleEndian.PutUint64(m, uint64(k))
				return m[:max(8, sizes[k])]
			}
			if ep.Rank() == 0 {
				return isendOrderSend(ctx, ep, n, rng, msg)
			}
			return isendOrderRecv(ctx, ep, n, rng, msg)
		},
		gen.IntRange(2, 48), gen.UInt64(),
	))
	props.TestingRun(t)
}

func isendOrderSend(ctx context.Context, ep channel.Comm, n int, rng *rand.Rand, msg func(int) []byte) string {
	var reqs []*channel.Request
	for k := range n {
		if rng.IntN(4) == 0 {
			if err := ep.Send(ctx, 1, 5, msg(k)); err != nil {
				return fmt.Sprintf("send %d: %v", k, err)
			}
			continue
		}
		reqs = append(reqs, channel.Isend(ctx, ep, 1, 5, msg(k)))
	}
	if err := channel.WaitAll(reqs...); err != nil {
		return err.Error()
	}
	return ""
}

func isendOrderRecv(ctx context.Context, ep channel.Comm, n int, rng *rand.Rand, msg func(int) []byte) string {
	bufs := make([][]byte, n)
	reqs := make([]*channel.Request, n)
	for k := range n {
		bufs[k] = make([]byte, len(msg(k)))
		if rng.IntN(2) == 0 {
			reqs[k] = channel.Irecv(ctx, ep, 0, 5, bufs[k])
			continue
		}
		// The receives posted before it, not yet waited for, are
		// matched first all the same.
		st, err := ep.Recv(ctx, 0, 5, bufs[k])
		if err != nil {
			return fmt.Sprintf("receive %d: %v", k, err)
		}
		if got := binary.LittleEndian.Uint64(bufs[k]); got != uint64(k) || st.Len != len(msg(k)) {
			return fmt.Sprintf("receive %d got message %d (%d bytes)", k, got, st.Len)
		}
	}
	for k, r := range reqs {
		if r == nil {
			continue
		}
		st, err := r.Wait()
		if err != nil {
			return fmt.Sprintf("receive %d: %v", k, err)
		}
		want := msg(k)
		if got := binary.LittleEndian.Uint64(bufs[k]); got != uint64(k) || st.Len != len(want) || string(bufs[k][:st.Len]) != string(want) {
			return fmt.Sprintf("receive %d got message %d (%d bytes)", k, got, st.Len)
		}
	}
	return ""
}
