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

// TestSyncVerdict: in process a message verified while its Send delivers
// it has its OK handed to the sender by that call (arriveSync), not sent
// as a frame. Whether the receive is posted first (the verdict comes that
// way) or later (it comes as a frame), and whether the sender's frames
// are damaged on the way (rank 0's only: rank 1's transport stays a
// plain localTx, the condition for the direct way), every message
// arrives as sent, every send ends without error, and nothing is left
// unverified.
func TestSyncVerdict(t *testing.T) {
	sizes := []int{0, 1, 100, 1 << 10, 5000, 64 << 10, 200 << 10}
	params := gopter.DefaultTestParametersWithSeed(3)
	params.MinSuccessfulTests = 40
	params.MaxShrinkCount = 3 // a failing run can take its whole timeout
	props := gopter.NewProperties(params)
	var injected, detected uint64
	props.Property("every message arrives as sent", prop.ForAll(
		func(merkle bool, damage bool, picks []uint8) bool {
			s, err := syncVerdictRun(merkle, damage, picks, sizes)
			if err != nil {
				t.Log(err)
				return false
			}
			injected += s.Injected
			detected += s.Detected
			return true
		},
		gen.Bool(), gen.Bool(), gen.SliceOfN(12, gen.UInt8()),
	))
	props.TestingRun(t)
	if injected == 0 || detected == 0 {
		t.Errorf("%d frames damaged, %d caught: the runs did not test damage", injected, detected)
	}
}

// syncVerdictRun sends a message of sizes[pick] for each pick from rank 0
// to rank 1, the receive posted first if the pick's top bit is set, and
// returns the two ranks' Stats added up.
func syncVerdictRun(merkle, damage bool, picks []uint8, sizes []int) (Stats, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var opts []TransportOption
	if damage {
		opts = append(opts, WithInjector(&Injector{Rate: 0.2, Seed: uint64(len(picks)) + uint64(picks[0]), Ranks: []int{0}}), WithProbe(20*time.Millisecond))
	}
	eps, err := NewLocal(2, opts...)
	if err != nil {
		return Stats{}, err
	}
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	cs := make([]Comm, 2)
	for i, ep := range eps {
		if merkle {
			cs[i], err = WithMerkle(ep)
		} else {
			cs[i], err = WithChecksum(ep)
		}
		if err != nil {
			return Stats{}, err
		}
	}
	for i, p := range picks {
		size, posted := sizes[int(p)%len(sizes)], p&0x80 != 0
		sent, got := pattern(size, uint64(i)), make([]byte, size)
		var st Status
		var sendErr, recvErr error
		if posted {
			r := Irecv(ctx, cs[1], 0, i, got)
			sendErr = cs[0].Send(ctx, 1, i, sent)
			st, recvErr = r.Wait()
		} else {
			s := Isend(ctx, cs[0], 1, i, sent)
			st, recvErr = cs[1].Recv(ctx, 0, i, got)
			_, sendErr = s.Wait()
		}
		if sendErr != nil || recvErr != nil {
			return Stats{}, fmt.Errorf("message %d (%d bytes, posted %v): send %v, receive %v", i, size, posted, sendErr, recvErr)
		}
		if st.Len != size || !bytes.Equal(got, sent) {
			return Stats{}, fmt.Errorf("message %d (%d bytes, posted %v): received %d bytes, not what was sent", i, size, posted, st.Len)
		}
	}
	if err := Flush(ctx, cs[0]); err != nil {
		return Stats{}, fmt.Errorf("flush: %v", err)
	}
	s0, s1 := StatsOf(cs[0]), StatsOf(cs[1])
	if s1.Unrepaired != 0 {
		return Stats{}, fmt.Errorf("rank 1 gave up on %d messages", s1.Unrepaired)
	}
	return Stats{Injected: s0.Injected + s1.Injected, Detected: s0.Detected + s1.Detected}, nil
}
