package channel

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

type collCase struct {
	P, Size, Root int
	Seed          uint64
}

func collGen() gopter.Gen {
	return gopter.CombineGens(gen.IntRange(1, 16), gen.IntRange(0, 3), gen.IntRange(0, 1<<20), gen.IntRange(0, 15), gen.UInt64()).
		Map(func(v []any) collCase {
			// Sizes: a third tiny, the rest spread up to 1 MiB for the
			// smaller rank counts (the all-gather holds p copies).
			size := []int{0, 1, 17, 1000}[v[1].(int)]
			if v[2].(int)%3 != 0 {
				size = v[2].(int) >> (v[0].(int) / 4)
			}
			return collCase{P: v[0].(int), Size: size, Root: v[3].(int) % v[0].(int), Seed: v[4].(uint64)}
		})
}

func params(n int) *gopter.TestParameters {
	p := gopter.DefaultTestParametersWithSeed(1)
	p.MinSuccessfulTests = n
	if testing.Short() {
		p.MinSuccessfulTests = max(n/5, 5)
	}
	return p
}

// blockOf is rank r's data in a collective case.
func blockOf(c collCase, r int) []byte { return pattern(c.Size, c.Seed+uint64(r)) }

// checkCollectives runs every collective on comms (made for the case) and
// checks that every rank holds exactly the right bytes.
func checkCollectives(t *testing.T, c collCase, comms []Comm) error {
	return spmd(t, comms, func(ctx context.Context, cm Comm) error {
		r := cm.Rank()
		if err := Barrier(ctx, cm); err != nil {
			return fmt.Errorf("barrier: %w", err)
		}
		buf := make([]byte, c.Size)
		if r == c.Root {
			copy(buf, blockOf(c, c.Root))
		}
		if err := Bcast(ctx, cm, c.Root, buf); err != nil {
			return fmt.Errorf("bcast: %w", err)
		}
		if !bytes.Equal(buf, blockOf(c, c.Root)) {
			return fmt.Errorf("bcast: wrong data")
		}
		all := make([]byte, c.P*c.Size)
		var recv []byte
		if r == c.Root {
			recv = all
		}
		if err := Gather(ctx, cm, c.Root, blockOf(c, r), recv); err != nil {
			return fmt.Errorf("gather: %w", err)
		}
		want := make([]byte, 0, c.P*c.Size)
		for i := range c.P {
			want = append(want, blockOf(c, i)...)
		}
		if r == c.Root && !bytes.Equal(all, want) {
			return fmt.Errorf("gather: wrong data")
		}
		for _, a := range []struct {
			name string
			fn   func(context.Context, Comm, []byte, []byte) error
		}{{"auto", Allgather}, {"ring", RingAllgather}, {"bruck", BruckAllgather}} { // the same order on every rank
			name, ag := a.name, a.fn
			clear(all)
			if err := ag(ctx, cm, blockOf(c, r), all); err != nil {
				return fmt.Errorf("allgather %s: %w", name, err)
			}
			if !bytes.Equal(all, want) {
				return fmt.Errorf("allgather %s: wrong data", name)
			}
		}
		return nil
	})
}

func TestCollectivesLocal(t *testing.T) {
	props := gopter.NewProperties(params(60))
	props.Property("every rank gets exactly the right data", prop.ForAll(func(c collCase) string {
		if err := checkCollectives(t, c, local(t, c.P)); err != nil {
			return fmt.Sprintf("%+v: %v", c, err)
		}
		return ""
	}, collGen()))
	props.TestingRun(t)
}

func TestCollectiveDisagreement(t *testing.T) {
	comms := local(t, 3)
	err := spmd(t, comms, func(ctx context.Context, c Comm) error {
		buf := make([]byte, 10+c.Rank()) // the ranks disagree on the size
		return Bcast(ctx, c, 0, buf)
	})
	if err == nil {
		t.Error("a broadcast with sizes that differ succeeded")
	}
}

// TestCollectiveLeftovers: a message left over from a collective call
// that failed on one rank (its peer sent it after the rank had given up)
// must not be taken by the next call of the same collective, which would
// return success with the old call's bytes; and the next call drops it.
func TestCollectiveLeftovers(t *testing.T) {
	layers := map[string]func(Comm) (Comm, error){
		"none":     func(c Comm) (Comm, error) { return c, nil },
		"checksum": func(c Comm) (Comm, error) { return WithChecksum(c) },
		"merkle":   func(c Comm) (Comm, error) { return WithMerkle(c, Segment(64)) },
	}
	for name, layer := range layers {
		for _, coll := range []string{"bcast", "allgather"} {
			t.Run(name+"/"+coll, func(t *testing.T) {
				comms := local(t, 2)
				for r := range comms {
					var err error
					if comms[r], err = layer(comms[r]); err != nil {
						t.Fatal(err)
					}
				}
				const n = 300
				run := func(ctx context.Context, c Comm, call int) ([]byte, error) {
					mine := pattern(n, uint64(10*call+c.Rank()))
					if coll == "bcast" {
						if c.Rank() == 0 {
							return mine, Bcast(ctx, c, 0, mine)
						}
						buf := make([]byte, n)
						return buf, Bcast(ctx, c, 0, buf)
					}
					recv := make([]byte, 2*n)
					return recv, Allgather(ctx, c, mine, recv)
				}
				want := func(call int) []byte {
					if coll == "bcast" {
						return pattern(n, uint64(10*call))
					}
					return append(pattern(n, uint64(10*call)), pattern(n, uint64(10*call+1))...)
				}
				// Call 1: rank 1 gives up before rank 0 comes; rank 0's
				// messages to it are left over (rank 0 may fail too).
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
				if _, err := run(ctx, comms[1], 1); err == nil {
					t.Fatal("call 1 on rank 1 alone succeeded")
				}
				cancel()
				ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
				run(ctx, comms[0], 1)
				cancel()
				// Call 2, on both: each rank gets call 2's bytes.
				err := spmd(t, comms, func(ctx context.Context, c Comm) error {
					got, err := run(ctx, c, 2)
					if err != nil {
						return err
					}
					if !bytes.Equal(got, want(2)) {
						return fmt.Errorf("call 2 returned other bytes than were sent in it (call 1's: %v)", bytes.Equal(got, want(1)))
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				e := comms[1].(framed).engine()
				e.mu.Lock()
				left := len(e.unexpected)
				e.mu.Unlock()
				if left != 0 {
					t.Errorf("rank 1 still holds %d messages after the next call", left)
				}
			})
		}
	}
}
