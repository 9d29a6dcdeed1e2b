package channel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// TestSyncVerdict: in process a message verified while its Send delivers
// it has its OK handed to the sender by that call (arriveSync), not sent
// as a frame. Two ranks send to a third at once, each receive posted
// before its message (the verdict comes that way) or after (it comes as
// a frame), the senders' frames damaged on the way or not (theirs only:
// the receiver's transport stays a plain localTx, the condition for the
// direct way). Every message arrives as sent, every send ends without
// error, nothing is left unverified, and the direct way was taken.
func TestSyncVerdict(t *testing.T) {
	sizes := []int{0, 1, 100, 1 << 10, 5000, 64 << 10, 200 << 10}
	params := gopter.DefaultTestParametersWithSeed(3)
	params.MinSuccessfulTests = 40
	params.MaxShrinkCount = 3 // a failing run can take its whole timeout
	props := gopter.NewProperties(params)
	var injected, detected uint64
	var direct [2]uint64 // OKs that ended their send in the call (frameOne), and that went to the sender's engine
	props.Property("every message arrives as sent", prop.ForAll(
		func(merkle bool, fault int, picks []uint8) bool {
			s, n, err := syncVerdictRun(merkle, fault, picks, sizes)
			if err != nil {
				t.Log(err)
				return false
			}
			injected += s.Injected
			detected += s.Detected
			direct[0] += n[0]
			direct[1] += n[1]
			return true
		},
		gen.Bool(), gen.IntRange(-1, int(Duplicate)), gen.SliceOfN(12, gen.UInt8()),
	))
	props.TestingRun(t)
	if injected == 0 || detected == 0 {
		t.Errorf("%d frames damaged, %d caught: the runs did not test damage", injected, detected)
	}
	if direct[0] == 0 || direct[1] == 0 {
		t.Errorf("OKs the direct way: %d ended their send in the call, %d went to the sender's engine; want some of each", direct[0], direct[1])
	}
}

// syncVerdictRun has ranks 0 and 2 each send a message of sizes[pick] to
// rank 1 for each pick, the receive posted first if the pick's top bit
// is set, their frames damaged by fault (none if negative). It returns
// the ranks' Stats added up and how many verdicts went the direct way:
// ending their send in the call (a sender's plain localTx: frameOne),
// and handed to the sender's engine (a sender behind an Injector).
func syncVerdictRun(merkle bool, fault int, picks []uint8, sizes []int) (Stats, [2]uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var opts []TransportOption
	if fault >= 0 {
		opts = append(opts, WithInjector(&Injector{Rate: 0.2, Fault: Fault(fault), Seed: uint64(picks[0]), Ranks: []int{0, 2}}), WithProbe(20*time.Millisecond))
	}
	eps, err := NewLocal(3, opts...)
	if err != nil {
		return Stats{}, [2]uint64{}, err
	}
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	var direct [2]atomic.Uint64
	eps[1].e.tx.(*localTx).net.testHookSyncGap = func(handoff bool) { // the receiver's transport is a plain localTx
		if handoff {
			direct[1].Add(1)
		} else {
			direct[0].Add(1)
		}
	}
	cs := make([]Comm, 3)
	for i, ep := range eps {
		if merkle {
			cs[i], err = WithMerkle(ep)
		} else {
			cs[i], err = WithChecksum(ep)
		}
		if err != nil {
			return Stats{}, [2]uint64{}, err
		}
	}
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for _, src := range []int{0, 2} {
		wg.Go(func() {
			for i, p := range picks {
				size, posted := sizes[int(p)%len(sizes)], p&0x80 != 0
				sent, got := pattern(size, uint64(src<<8+i)), make([]byte, size)
				var st Status
				var sendErr, recvErr error
				if posted {
					r := Irecv(ctx, cs[1], src, i, got)
					sendErr = cs[src].Send(ctx, 1, i, sent)
					st, recvErr = r.Wait()
				} else {
					s := Isend(ctx, cs[src], 1, i, sent)
					st, recvErr = cs[1].Recv(ctx, src, i, got)
					_, sendErr = s.Wait()
				}
				if sendErr != nil || recvErr != nil {
					errs[src] = fmt.Errorf("rank %d's message %d (%d bytes, posted %v): send %v, receive %v", src, i, size, posted, sendErr, recvErr)
					return
				}
				if st.Len != size || !bytes.Equal(got, sent) {
					errs[src] = fmt.Errorf("rank %d's message %d (%d bytes, posted %v): received %d bytes, not what was sent", src, i, size, posted, st.Len)
					return
				}
			}
			if err := Flush(ctx, cs[src]); err != nil {
				errs[src] = fmt.Errorf("rank %d's flush: %v", src, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Stats{}, [2]uint64{}, err
	}
	if err := noneInHand(eps); err != nil {
		return Stats{}, [2]uint64{}, err
	}
	var sum Stats
	for _, c := range cs {
		s := StatsOf(c)
		if s.Unrepaired != 0 {
			return Stats{}, [2]uint64{}, fmt.Errorf("rank %d gave up on %d messages", c.Rank(), s.Unrepaired)
		}
		sum.Injected += s.Injected
		sum.Detected += s.Detected
	}
	return sum, [2]uint64{direct[0].Load(), direct[1].Load()}, nil
}

// A receiver that closes as soon as its Recv returns still lets its OK
// reach the sender when the verdict went the direct way: the Send that
// delivered the message hands it over (or ends the send with it) after
// the Recv may have returned, and Close waits for it. (Without that wait,
// with the gap widened as here, almost every send failed with the
// receiver lost.) In odd rounds the sender is behind an Injector that
// damages nothing: its OK then goes to its engine (handoff), else it
// ends the send in the call (frameOne).
func TestSyncVerdictBeforeClose(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 200 {
		var opts []TransportOption
		wrapped := i%2 == 1
		if wrapped {
			opts = append(opts, WithInjector(&Injector{Rate: 1e-300, Ranks: []int{0}}))
		}
		eps, err := NewLocal(2, opts...)
		if err != nil {
			t.Fatal(err)
		}
		var direct, handedOff atomic.Uint64
		eps[1].e.tx.(*localTx).net.testHookSyncGap = func(handoff bool) {
			direct.Add(1)
			if handoff {
				handedOff.Add(1)
			}
			time.Sleep(50 * time.Microsecond)
		}
		c0, err := WithChecksum(eps[0])
		if err != nil {
			t.Fatal(err)
		}
		c1, err := WithChecksum(eps[1])
		if err != nil {
			t.Fatal(err)
		}
		msg := pattern(1+i%200, uint64(i))
		r := Irecv(ctx, c1, 0, 1, make([]byte, len(msg)))
		closed := make(chan error, 1)
		go func() {
			_, err := r.Wait()
			eps[1].Close()
			closed <- err
		}()
		sendErr := c0.Send(ctx, 1, 1, msg)
		if err := <-closed; err != nil {
			t.Fatalf("round %d: receive: %v", i, err)
		}
		if sendErr != nil {
			t.Fatalf("round %d: the send of a message its receiver got: %v", i, sendErr)
		}
		if direct.Load() != 1 || (handedOff.Load() == 1) != wrapped {
			t.Fatalf("round %d (sender wrapped: %v): %d verdicts went the direct way, %d of them to the engine; want 1, and to the engine if wrapped", i, wrapped, direct.Load(), handedOff.Load())
		}
		if err := noneInHand(eps); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		eps[0].Close()
	}
}

// noneInHand checks that the sends of a job in process are over: no OK is
// held by a Send (localTx.inHand), and no send is left in its engine
// (engine.sends) — a send that ended in the call that delivered its
// frame (sender.frameOne) takes itself out.
func noneInHand(eps []*Endpoint) error {
	for _, ep := range eps {
		if lt, ok := ep.e.tx.(*localTx); ok { // else an Injector's: the job's localNet is the same
			for r, t := range lt.net.txs {
				if n := t.inHand.Load(); n != 0 {
					return fmt.Errorf("rank %d holds %d OKs", r, n)
				}
			}
			break
		}
	}
	for r, ep := range eps {
		ep.e.mu.Lock()
		n := len(ep.e.sends)
		ep.e.mu.Unlock()
		if n != 0 {
			return fmt.Errorf("rank %d has %d sends left", r, n)
		}
	}
	return nil
}
