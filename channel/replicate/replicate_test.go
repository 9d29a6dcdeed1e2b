package replicate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/csum"
)

var transports = []string{"local", "tcp"}
var protocols = []Protocol{MsgPlusHash, AllToAll}

// Every virtual rank sends to the next one, with r = 1, 2, 3, both
// protocols, both transports; nothing corrupted, nothing flagged.
func TestRingClean(t *testing.T) {
	for _, tr := range transports {
		for _, p := range protocols {
			for _, r := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("%s/%s/r=%d", tr, p, r), func(t *testing.T) {
					const n = 3
					cs := world(t, tr, n, r, WithProtocol(p))
					err := spmd(t, cs, func(ctx context.Context, c *Comm) error {
						for _, size := range []int{0, 1, 1000, 70000} {
							msg := pattern(size, uint64(c.Rank()*1000+size))
							if err := c.Send(ctx, (c.Rank()+1)%n, 5, msg); err != nil {
								return err
							}
							buf := make([]byte, size+3)
							prev := (c.Rank() + n - 1) % n
							st, err := c.Recv(ctx, prev, 5, buf)
							if err != nil {
								return err
							}
							if st != (channel.Status{Source: prev, Tag: 5, Len: size}) || !bytes.Equal(buf[:size], pattern(size, uint64(prev*1000+size))) {
								return fmt.Errorf("size %d: status %+v, data wrong", size, st)
							}
						}
						if s := c.Stats(); s.Mismatches != 0 || s.Compared != 4 {
							return fmt.Errorf("stats %+v", s)
						}
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
}

// fault is what a test does to the sender replicas' buffers: replica
// bad[i] flips bit bits[i] before sending (as a fault in its memory would).
type fault struct {
	Size int
	Bad  []int
	Bits []int
}

// exchange has virtual rank 0 send msg to rank 1, each sender replica
// corrupting its copy as f says, and returns what every replica of rank
// 1 got (its buffer, or its error).
func exchange(t *testing.T, cs []*Comm, msg []byte, f fault, tag int) ([][]byte, []error) {
	t.Helper()
	r := cs[0].Degree()
	got := make([][]byte, r)
	errs := make([]error, r)
	err := spmd(t, cs, func(ctx context.Context, c *Comm) error {
		switch c.Rank() {
		case 0:
			data := bytes.Clone(msg)
			for i, k := range f.Bad {
				if k == c.Replica() {
					data[f.Bits[i]/8] ^= 1 << (f.Bits[i] % 8)
				}
			}
			return c.Send(ctx, 1, tag, data)
		case 1:
			buf := make([]byte, len(msg))
			st, err := c.Recv(ctx, 0, tag, buf)
			if err == nil && st.Len != len(msg) {
				err = fmt.Errorf("length %d", st.Len)
			}
			got[c.Replica()], errs[c.Replica()] = buf, err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, errs
}

func props(t *testing.T) *gopter.Properties {
	params := gopter.DefaultTestParametersWithSeed(1)
	params.MinSuccessfulTests = 60
	if testing.Short() {
		params.MinSuccessfulTests = 20
	}
	return gopter.NewProperties(params)
}

// For any single corrupted sender replica, every receiver replica gets
// the uncorrupted data (r = 3, 4, 5; both protocols; local and TCP).
func TestPropertySingleFaultCorrected(t *testing.T) {
	for _, tr := range transports {
		for _, p := range protocols {
			for _, r := range []int{3, 4, 5} {
				t.Run(fmt.Sprintf("%s/%s/r=%d", tr, p, r), func(t *testing.T) {
					cs := world(t, tr, 2, r, WithProtocol(p))
					pr := props(t)
					tag := 0
					pr.Property("one bad replica is voted out", prop.ForAll(
						func(size, bad int, bit uint32) bool {
							msg := pattern(size, uint64(size))
							tag++
							got, errs := exchange(t, cs, msg, fault{size, []int{bad}, []int{int(bit % uint32(size*8))}}, tag)
							for k := range r {
								if errs[k] != nil || !bytes.Equal(got[k], msg) {
									t.Logf("replica %d: %v", k, errs[k])
									return false
								}
							}
							return true
						},
						gen.IntRange(1, 5000), gen.IntRange(0, r-1), gen.UInt32(),
					))
					pr.TestingRun(t)
					var corrected uint64
					for _, c := range cs {
						corrected += c.Stats().Corrected
					}
					if corrected == 0 {
						t.Error("no receive was corrected")
					}
				})
			}
		}
	}
}

// Two corrupted replicas of three (differently): every receiver replica
// fails or holds the right data; none holds wrong data without an error.
func TestPropertyDoubleFaultNeverWrong(t *testing.T) {
	for _, tr := range transports {
		for _, p := range protocols {
			t.Run(fmt.Sprintf("%s/%s", tr, p), func(t *testing.T) {
				pr := props(t)
				var cs []*Comm
				fresh := func() { cs = world(t, tr, 2, 3, WithProtocol(p)) }
				fresh()
				tag := 0
				pr.Property("error or the right data", prop.ForAll(
					func(size, skip int, b1, b2 uint32) bool {
						msg := pattern(size, uint64(size)+1)
						bits := []int{int(b1 % uint32(size*8)), int(b2 % uint32(size*8))}
						bad := []int{(skip + 1) % 3, (skip + 2) % 3}
						tag++
						got, errs := exchange(t, cs, msg, fault{size, bad, bits}, tag)
						failed := false
						for k := range 3 {
							if errs[k] == nil && !bytes.Equal(got[k], msg) {
								t.Logf("replica %d accepted wrong data", k)
								return false
							}
							if errs[k] != nil {
								if !errors.Is(errs[k], ErrNoMajority) {
									t.Logf("replica %d: %v", k, errs[k])
									return false
								}
								failed = true
							}
						}
						if failed {
							fresh() // as a job would abort: start again
						}
						return true
					},
					gen.IntRange(1, 3000), gen.IntRange(0, 2), gen.UInt32(), gen.UInt32(),
				))
				pr.TestingRun(t)
			})
		}
	}
}

// With r = 2 a corrupted replica is detected on both receivers, never
// corrected, never returned as good.
func TestDoubleRedundancyDetects(t *testing.T) {
	for _, p := range protocols {
		cs := world(t, "local", 2, 2, WithProtocol(p))
		msg := pattern(100, 3)
		_, errs := exchange(t, cs, msg, fault{100, []int{1}, []int{17}}, 1)
		for k, err := range errs {
			var ce *CorruptionError
			if !errors.Is(err, ErrMismatch) || !errors.As(err, &ce) || ce.Source != 0 || ce.Rank != 1 {
				t.Errorf("%s replica %d: %v", p, k, err)
			}
		}
	}
}

// A wildcard receive delivers the same (source, tag, data) on every
// replica, whatever arrives first where.
func TestPropertyWildcardSameEverywhere(t *testing.T) {
	for _, tr := range transports {
		for _, p := range protocols {
			t.Run(fmt.Sprintf("%s/%s", tr, p), func(t *testing.T) {
				const n, r = 4, 3
				cs := world(t, tr, n, r, WithProtocol(p))
				pr := props(t)
				pr.Property("same envelope and data on every replica", prop.ForAll(
					func(tags []int, anyTag bool) bool {
						type got struct {
							st   channel.Status
							data string
						}
						seen := make([][]got, r)
						err := spmd(t, cs, func(ctx context.Context, c *Comm) error {
							if c.Rank() != 0 {
								for i, tg := range tags {
									if err := c.Send(ctx, 0, tg, []byte(fmt.Sprint(c.Rank(), i, tg))); err != nil {
										return err
									}
								}
								return nil
							}
							for range (n - 1) * len(tags) {
								buf := make([]byte, 64)
								tag := channel.AnyTag
								if !anyTag {
									tag = tags[0]
								}
								if !anyTag && len(seen[c.Replica()]) >= (n-1)*countOf(tags, tags[0]) {
									tag = channel.AnyTag
								}
								st, err := c.Recv(ctx, channel.AnySource, tag, buf)
								if err != nil {
									return err
								}
								seen[c.Replica()] = append(seen[c.Replica()], got{st, string(buf[:st.Len])})
							}
							return nil
						})
						if err != nil {
							t.Log(err)
							return false
						}
						for k := 1; k < r; k++ {
							if fmt.Sprint(seen[k]) != fmt.Sprint(seen[0]) {
								t.Logf("replica %d saw %v, replica 0 %v", k, seen[k], seen[0])
								return false
							}
						}
						return true
					},
					gen.SliceOfN(4, gen.IntRange(0, 3)), gen.Bool(),
				))
				pr.TestingRun(t)
			})
		}
	}
}

func countOf(xs []int, x int) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

// The collectives of package channel run over the replicated Comm, and
// a corrupted replica's blocks are voted out in them too.
func TestCollectivesProtected(t *testing.T) {
	for _, p := range protocols {
		const n, r = 5, 3
		cs := world(t, "local", n, r, WithProtocol(p), WithInjector(Injector{Rate: 0.3, Seed: 9, Replica: 1, Rank: Every, Step: Every}))
		err := spmd(t, cs, func(ctx context.Context, c *Comm) error {
			for round := range 20 {
				send := pattern(64, uint64(c.Rank()*100+round))
				recv := make([]byte, 64*n)
				if err := channel.Allgather(ctx, c, send, recv); err != nil {
					return err
				}
				// Replica 1's own memory is what the injector damages (its
				// send buffer, and in Bruck's algorithm the blocks it
				// forwards): only the others must see every block right.
				for i := range n {
					if !bytes.Equal(recv[i*64:(i+1)*64], pattern(64, uint64(i*100+round))) && c.Replica() != 1 {
						return fmt.Errorf("round %d: block %d wrong", round, i)
					}
				}
				b := pattern(100, uint64(round))
				if c.Rank() != 2 {
					clear(b)
				}
				if err := channel.Bcast(ctx, c, 2, b); err != nil {
					return err
				}
				if !bytes.Equal(b, pattern(100, uint64(round))) && c.Replica() != 1 {
					return fmt.Errorf("round %d: bcast wrong", round)
				}
			}
			return channel.Barrier(ctx, c)
		})
		if err != nil {
			t.Fatal(err)
		}
		var inj, corr uint64
		for _, c := range cs {
			s := c.Stats()
			inj += s.Injected
			corr += s.Corrected
		}
		if inj == 0 || corr == 0 {
			t.Errorf("%s: injected %d, corrected %d", p, inj, corr)
		}
	}
}

// Wtime, Seed and Test give every replica of a rank the same answer.
func TestDeterminism(t *testing.T) {
	cs := world(t, "local", 2, 3)
	clocks := make([]int64, len(cs))
	seeds := make([]uint64, len(cs))
	err := spmd(t, cs, func(ctx context.Context, c *Comm) error {
		w, err := c.Wtime(ctx)
		if err != nil {
			return err
		}
		s, err := c.Seed(ctx)
		if err != nil {
			return err
		}
		clocks[c.Native()], seeds[c.Native()] = w.UnixNano(), s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		r0 := c.Map().Native(c.Rank(), 0)
		if clocks[c.Native()] != clocks[r0] || seeds[c.Native()] != seeds[r0] {
			t.Errorf("native %d differs from its replica 0", c.Native())
		}
	}
}

// Bytes on the wire per application message, counted as sent: AllToAll
// r² copies, MsgPlusHash r copies and r hashes.
func TestWireCost(t *testing.T) {
	const size = 4096
	for _, p := range protocols {
		for _, r := range []int{2, 3} {
			cs := world(t, "local", 2, r, WithProtocol(p))
			_, errs := exchange(t, cs, pattern(size, 1), fault{}, 3)
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			var bytes, msgs uint64
			for _, c := range cs {
				bytes += c.Stats().BytesSent
				msgs += c.Stats().Sent
			}
			want := uint64(r * r * size)
			wantMsgs := uint64(r * r)
			if p == MsgPlusHash {
				want, wantMsgs = uint64(r*size+r*hashSize), uint64(2*r)
			}
			if bytes != want || msgs != wantMsgs {
				t.Errorf("%s r=%d: %d bytes in %d messages, want %d in %d", p, r, bytes, msgs, want, wantMsgs)
			}
		}
	}
}

// Two discoveries ending at once on one replica (a halo from each side,
// both corrupted): each correction reaches the receive it belongs to.
// (A verdict and its copy once went out separately, and two concurrent
// corrections of equal length could swap.)
func TestConcurrentCorrections(t *testing.T) {
	const size = 512
	cs := world(t, "local", 3, 3)
	for round := range 2000 {
		err := spmd(t, cs, func(ctx context.Context, c *Comm) error {
			if c.Rank() != 1 {
				data := pattern(size, uint64(round*10+c.Rank()))
				if c.Replica() == round%3 {
					data[round%size] ^= 1 << (c.Rank() % 8)
				}
				return c.Send(ctx, 1, 4, data)
			}
			a, b := make([]byte, size), make([]byte, size)
			ra := channel.Irecv(ctx, c, 0, 4, a)
			rb := channel.Irecv(ctx, c, 2, 4, b)
			if err := channel.WaitAll(ra, rb); err != nil {
				return err
			}
			if !bytes.Equal(a, pattern(size, uint64(round*10))) || !bytes.Equal(b, pattern(size, uint64(round*10+2))) {
				return fmt.Errorf("round %d: a correction reached the wrong receive", round)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Test gives every replica replica 0's answer, however far each one's own
// request has got: the replicas of rank 0 poll the same sequence.
func TestTestSameEverywhere(t *testing.T) {
	cs := world(t, "local", 2, 3)
	polls := make([]string, len(cs))
	err := spmd(t, cs, func(ctx context.Context, c *Comm) error {
		if c.Rank() == 1 {
			time.Sleep(time.Duration(5+c.Replica()*3) * time.Millisecond)
			return c.Send(ctx, 0, 9, []byte("late"))
		}
		buf := make([]byte, 8)
		req := channel.Irecv(ctx, c, 1, 9, buf)
		for i := 0; ; i++ {
			done, err := c.Test(ctx, req)
			if err != nil {
				return err
			}
			polls[c.Native()] += fmt.Sprint(done, " ")
			if done {
				break
			}
			time.Sleep(time.Duration(1+c.Replica()) * time.Millisecond) // each its own pace
		}
		if _, err := req.Wait(); err != nil || string(buf[:4]) != "late" {
			return fmt.Errorf("%v %q", err, buf)
		}
		i, err := c.Testany(ctx, []*channel.Request{req})
		if err != nil || i != 0 {
			return fmt.Errorf("Testany: %d, %v", i, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m := cs[0].Map()
	for k := 1; k < 3; k++ {
		if polls[m.Native(0, k)] != polls[m.Native(0, 0)] {
			t.Errorf("replica %d polled %q, replica 0 %q", k, polls[m.Native(0, k)], polls[m.Native(0, 0)])
		}
	}
}

// Receivers name the sender replica whose copy lost (Stats' Blamed), by
// vote and, with correction off, against the reference replica.
func TestBlame(t *testing.T) {
	for _, p := range protocols {
		for _, tc := range []struct {
			r    int
			opts []Option
		}{{3, nil}, {2, []Option{WithDetectOnly(0)}}} {
			cs := world(t, "local", 2, tc.r, append(tc.opts, WithProtocol(p))...)
			c0 := cs[0]
			c0.Step(0)
			_, errs := exchange(t, cs, pattern(200, 4), fault{200, []int{1}, []int{77}}, 1)
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			sent := SentMap(statsOf(cs), c0.Map(), 1, 1)
			if !sent[0][0] || sent[1][0] {
				t.Errorf("%s r=%d: sent map %v", p, tc.r, sent)
			}
			if s := SentMap(statsOf(cs), c0.Map(), 0, 1); s[0][0] {
				t.Errorf("%s r=%d: replica 0 blamed", p, tc.r)
			}
		}
	}
}

func statsOf(cs []*Comm) []Stats {
	out := make([]Stats, len(cs))
	for i, c := range cs {
		out[i] = c.Stats()
	}
	return out
}

// A peer that sends malformed discovery records (wrong kind, size, or a
// rank out of range) stops this replica's discoveries with ErrWire: no
// panic, no allocation sized by the record, no hang.
func TestMalformedRecords(t *testing.T) {
	for _, rec := range [][]byte{
		nil,
		{'R'},
		make([]byte, maxRecord+100),
		report{Src: 7, Claims: [2]claim{{0, csum.Value{}}, {1, csum.Value{}}}}.put(nil), // rank 7 of 2
		verdict{Src: 0, From: 1, Outcome: outcomeNone, Len: 5}.put(nil),                 // no data, yet a length
		verdict{Src: 0, From: 2, Outcome: outcomeCorrect, Len: 5}.put(nil),              // signed by another replica
	} {
		nat := natives(t, "local", 6) // 2 ranks × 3 replicas; native 3 is rank 1's replica 1
		victim, err := New(nat[1], 3)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { victim.Close() })
		var repair channel.Comm
		for range 5 { // the rogue's fifth duplicate is the victims' discovery context
			repair = channel.Dup(nat[3].(channel.Duplicator))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		tag := tagVerdict
		if len(rec) > 0 && rec[0] == 'R' {
			tag = tagReport
		}
		if err := repair.Send(ctx, 1, tag, rec); err != nil {
			t.Fatal(err)
		}
		_, err = victim.box.wait(ctx, boxKey{'R', msgID{}, 9})
		cancel()
		if !errors.Is(err, ErrWire) {
			t.Errorf("%x: %v", rec, err)
		}
	}
}
