package tree

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/sigcheck/sigcheck/csum"
)

type parityCase struct {
	Size, Seg, P int
	Faulty       []int
	Seed         uint64
}

// parityCaseGen: data of up to 600 segments (so several stripes), any
// segment size, 1 to 8 parity segments, and a random set of corrupted
// segments — sometimes within what the parity can rebuild, sometimes not.
func parityCaseGen() gopter.Gen {
	return gen.UInt64().Map(func(seed uint64) parityCase {
		r := rand.New(rand.NewPCG(seed, 13))
		seg := 1 + r.IntN(200)
		size := 1 + r.IntN(600*seg)
		n := (size + seg - 1) / seg
		p := 1 + r.IntN(8)
		k := r.IntN(2*p + 1)
		var faulty []int
		for range k {
			j := r.IntN(n)
			if !slices.Contains(faulty, j) {
				faulty = append(faulty, j)
			}
		}
		slices.Sort(faulty)
		return parityCase{size, seg, p, faulty, seed}
	})
}

func TestParityRepair(t *testing.T) {
	props := gopter.NewProperties(params(200))
	props.Property("parity rebuilds the corrupted segments iff no stripe has more than P", prop.ForAll(func(c parityCase) bool {
		data := randomData(c.Size, c.Seed)
		sender := mustBuild(t, data, Segment(c.Seg))
		par, err := NewParity(data, c.Seg, c.P)
		if err != nil {
			return false
		}
		wire, err := DecodeParity(par.AppendBinary(nil))
		if err != nil {
			return false
		}
		bad := corrupt(data, c.Seg, c.Faulty, c.Seed)
		receiver := mustBuild(t, bad, Segment(c.Seg))
		found, _ := Diff(sender, receiver)
		want := func(j int) (csum.Value, bool) { return sender.Node(sender.Leaf(j)), true }
		perStripe := map[int]int{}
		worst := 0
		for _, j := range found {
			perStripe[j/par.Stripe]++
			worst = max(worst, perStripe[j/par.Stripe])
		}
		before := slices.Clone(bad)
		err = wire.Repair(bad, receiver, found, want)
		if worst <= c.P {
			return err == nil && bytes.Equal(bad, data) && receiver.Root() == sender.Root()
		}
		return errors.Is(err, ErrTooManyFaults) && bytes.Equal(bad, before)
	}, parityCaseGen()))
	props.TestingRun(t)
}

func TestParityRefusesBadRepairs(t *testing.T) {
	data := randomData(100_000, 14)
	sender := mustBuild(t, data, Segment(1000))
	par, err := NewParity(data, 1000, 2)
	if err != nil {
		t.Fatal(err)
	}
	if par.Stripes() != 1 || len(par.Shards) != 2 {
		t.Fatalf("%d stripes, %d shards", par.Stripes(), len(par.Shards))
	}
	want := func(j int) (csum.Value, bool) { return sender.Node(sender.Leaf(j)), true }
	bad := corrupt(data, 1000, []int{4, 40}, 15)
	receiver := mustBuild(t, bad, Segment(1000))
	// Corrupted parity: the rebuilt segments do not check, nothing is written.
	broken := *par
	broken.Shards = [][]byte{slices.Clone(par.Shards[0]), par.Shards[1]}
	broken.Shards[0][7] ^= 1
	before := slices.Clone(bad)
	if err := broken.Repair(bad, receiver, []int{4, 40}, want); !errors.Is(err, ErrRepairCheck) || !bytes.Equal(bad, before) {
		t.Errorf("corrupt parity: %v", err)
	}
	// A segment missed by the caller: the rebuilt ones do not check either.
	if err := par.Repair(bad, receiver, []int{4}, want); err == nil {
		// segment 40 is still corrupt, so the code's reconstruction of 4 uses bad data
		t.Error("repair from corrupt neighbours passed")
	}
	if err := par.Repair(bad, receiver, []int{4, 40}, func(int) (csum.Value, bool) { return csum.Value{}, false }); !errors.Is(err, ErrRepairCheck) {
		t.Errorf("no expected hash: %v", err)
	}
	if err := par.Repair(bad, receiver, []int{100}, want); !errors.Is(err, ErrIndex) {
		t.Errorf("segment out of range: %v", err)
	}
	if err := par.Repair(bad[:10], receiver, nil, want); !errors.Is(err, ErrShape) {
		t.Errorf("short data: %v", err)
	}
	if err := par.Repair(bad, receiver, []int{4, 40}, want); err != nil || !bytes.Equal(bad, data) {
		t.Errorf("good repair: %v", err)
	}
	for _, p := range []int{0, MaxParity + 1} {
		if _, err := NewParity(data, 1000, p); err == nil {
			t.Errorf("p=%d accepted", p)
		}
	}
	if _, err := NewParity(data, 0, 2); !errors.Is(err, ErrSegment) {
		t.Errorf("segment 0: %v", err)
	}
	// Wire: bad headers and lengths.
	b := par.AppendBinary(nil)
	for _, bb := range [][]byte{nil, b[:5], append(slices.Clone(b), 0), append([]byte{1, 6, 0, 2, 9}, b[5:]...)} {
		if _, err := DecodeParity(bb); !errors.Is(err, ErrWire) {
			t.Errorf("bad parity %x…: %v", bb[:min(len(bb), 8)], err)
		}
	}
}

// Parity streamed stripe by stripe into a layout equals NewParity's.
func TestParityStreamed(t *testing.T) {
	data := randomData(700_001, 8)
	want, err := NewParity(data, 1000, 3)
	if err != nil {
		t.Fatal(err)
	}
	par, _ := ParityLayout(int64(len(data)), 1000, 3)
	for s := range par.Stripes() {
		shards, err := par.EncodeStripe(data, s)
		if err != nil {
			t.Fatal(err)
		}
		par.Shards = append(par.Shards, shards...)
	}
	if len(par.Shards) != len(want.Shards) {
		t.Fatalf("%d shards, want %d", len(par.Shards), len(want.Shards))
	}
	for i := range par.Shards {
		if !bytes.Equal(par.Shards[i], want.Shards[i]) {
			t.Fatalf("shard %d differs", i)
		}
	}
	if _, err := par.EncodeStripe(data[1:], 0); !errors.Is(err, ErrShape) {
		t.Errorf("data of another size: %v", err)
	}
}
