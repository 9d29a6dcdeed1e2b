package channel

import (
	"bytes"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/sigcheck/sigcheck/internal/wire"
)

// TestRecentVerdicts: a remembered verdict comes back as the frame final
// sent, for each of the three final bodies, while it is among the last
// 4096; an older one is gone, and its sender's forgotten mark has passed
// its id, so that a late ask about it is answered as forgotten.
func TestRecentVerdicts(t *testing.T) {
	const keep = 4096
	bodies := [][]byte{okVerdict, failVerdict, {verdictDiscarded, discardTruncated}, {verdictDiscarded, discardCanceled}}
	params := gopter.DefaultTestParametersWithSeed(1)
	params.MinSuccessfulTests = 20
	props := gopter.NewProperties(params)
	props.Property("the last 4096 verdicts come back whole", prop.ForAll(
		func(n int, salt uint32) bool {
			eps, err := NewLocal(3)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, ep := range eps {
					ep.Close()
				}
			}()
			e := eps[0].e
			msgs := make([]*message, n)
			// In uint32: int(salt) is negative on 32-bit platforms.
			bodyOf := func(i int) []byte { return bodies[(uint32(i)+salt)%uint32(len(bodies))] }
			next := [3]uint64{}
			for i := range msgs {
				src := 1 + int((uint32(i)+salt)%2)
				next[src] += 1 + uint64(salt%3)
				m := &message{src: src, ctx: salt + uint32(i), tag: int64(i) - 7, id: next[src], total: int64(i) * 3}
				msgs[i] = m
				body := bodyOf(i)
				e.mu.Lock()
				e.remember(m, body)
				e.mu.Unlock()
			}
			e.mu.Lock()
			defer e.mu.Unlock()
			for i, m := range msgs {
				f, ok := e.recentVerdict(msgKey{m.src, m.id})
				if i < n-keep { // evicted
					if ok || e.forgotten[m.src] < m.id {
						t.Logf("message %d of %d: found %v, forgotten %d", i, n, ok, e.forgotten[m.src])
						return false
					}
					continue
				}
				want := ctlFrame{m.src, wire.Header{Kind: wire.KindVerdict, Ctx: m.ctx, Tag: m.tag, ID: m.id, Total: m.total, Flags: flagTriple}, bytes.Repeat(bodyOf(i), 3)}
				if !ok || f.dst != want.dst || f.h != want.h || !bytes.Equal(f.payload, want.payload) {
					t.Logf("message %d of %d: got %+v %v, want %+v", i, n, f, ok, want)
					return false
				}
			}
			return true
		},
		gen.IntRange(0, 2*keep+50), gen.UInt32(),
	))
	props.TestingRun(t)
}
