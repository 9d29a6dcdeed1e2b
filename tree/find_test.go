package tree

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/sigcheck/sigcheck/csum"
)

// faultCase is data of a random size, cut in random segments, and a random
// set of segments to corrupt: none, some, or all.
type faultCase struct {
	Size, Seg int
	Faulty    []int
	Seed      uint64
}

func faultGen() gopter.Gen {
	return gen.UInt64().Map(func(seed uint64) faultCase {
		r := rand.New(rand.NewPCG(seed, 3))
		seg := 1 + r.IntN(300)
		size := r.IntN(40 * seg)
		n := max(1, (size+seg-1)/seg)
		var faulty []int
		switch r.IntN(4) {
		case 0: // none
		case 1: // all
			if size > 0 {
				for j := range n {
					faulty = append(faulty, j)
				}
			}
		default:
			if size > 0 {
				for j := range n {
					if r.IntN(4) == 0 {
						faulty = append(faulty, j)
					}
				}
			}
		}
		return faultCase{size, seg, faulty, seed}
	})
}

// corrupt returns a copy of data with one random bit flipped in each
// listed segment.
func corrupt(data []byte, seg int, faulty []int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 4))
	out := slices.Clone(data)
	for _, j := range faulty {
		off := j * seg
		n := min(seg, len(data)-off)
		k := off + r.IntN(n)
		out[k] ^= 1 << r.IntN(8)
	}
	return out
}

// descend runs a whole descent between a sender and a receiver tree,
// through the wire forms, and returns the descent and the bytes exchanged.
func descend(t *testing.T, sender, receiver *Tree) (*Descent, int) {
	t.Helper()
	rootMsg := AppendRoot(nil, sender.Root(), sender.Hash().Size())
	wire := len(rootMsg)
	root, _, err := DecodeRoot(rootMsg)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDescent(receiver, root)
	for {
		req, ok := d.Request()
		if !ok {
			return d, wire
		}
		b, err := req.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		var got Request
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		ans, err := sender.Answer(got)
		if err != nil {
			t.Fatal(err)
		}
		a := ans.AppendBinary(nil, sender.Hash().Size())
		wire += len(b) + len(a)
		back, _, err := DecodeAnswer(a)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Answer(back); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindEveryFault(t *testing.T) {
	for _, h := range []string{"xxh3", "xxh3-128"} {
		props := gopter.NewProperties(params(300))
		props.Property(h+": Diff and the descent find exactly the corrupted segments", prop.ForAll(func(c faultCase) bool {
			data := randomData(c.Size, c.Seed)
			bad := corrupt(data, c.Seg, c.Faulty, c.Seed)
			sender := mustBuild(t, data, Segment(c.Seg), UseHash(h))
			receiver := mustBuild(t, bad, Segment(c.Seg), UseHash(h))
			diff, err := Diff(sender, receiver)
			if err != nil || !slices.Equal(diff, c.Faulty) && !(len(diff) == 0 && len(c.Faulty) == 0) {
				return false
			}
			d, _ := descend(t, sender, receiver)
			if got := d.Faulty(); !slices.Equal(got, diff) {
				return false
			}
			// Round and hash counts: one round per level down to the deepest
			// corrupted leaf; two hashes for each differing inner node.
			depth, inner := 0, 0
			for _, j := range c.Faulty {
				lvl := 0
				for i := sender.Leaf(j); i > 0; i = (i - 1) / 2 {
					lvl++
				}
				depth = max(depth, lvl)
			}
			for i := range sender.n - 1 {
				if sender.Node(i) != receiver.Node(i) {
					inner++
				}
			}
			if d.Rounds() != depth || d.Received() != 2*inner || d.Rounds() > sender.Depth() {
				return false
			}
			for _, j := range c.Faulty {
				if v, ok := d.Expected(j); !ok || v != sender.Node(sender.Leaf(j)) {
					return false
				}
			}
			return true
		}, faultGen()))
		props.TestingRun(t)
	}
}

func TestDescentBounds(t *testing.T) {
	// 32768 segments, 1 and 16 faults: the counts the issue asks for.
	data := randomData(32768*64, 5)
	sender := mustBuild(t, data, Segment(64))
	for _, k := range []int{1, 16} {
		var faulty []int
		for i := range k {
			faulty = append(faulty, i*2000+7)
		}
		receiver := mustBuild(t, corrupt(data, 64, faulty, 6), Segment(64))
		d, wire := descend(t, sender, receiver)
		if !slices.Equal(d.Faulty(), faulty) || d.Rounds() != 15 || d.Received() > 2*k*15 {
			t.Errorf("k=%d: faulty %v, %d rounds, %d hashes", k, d.Faulty(), d.Rounds(), d.Received())
		}
		// The package doc's byte count: the root, then per round a request
		// (3 bytes, a count, a uvarint of at most 3 bytes per node below
		// 2^21) and an answer (3 bytes, a count, 8 bytes per hash).
		bound := 11 + d.Received()*(3+8) + d.Rounds()*2*(3+uvarintLen(uint64(2*k)))
		if wire > bound || k == 1 && wire > 423 || k == 16 && wire >= 4096 {
			t.Errorf("k=%d: %d bytes on the wire, bound %d", k, wire, bound)
		}
	}
	// Nothing wrong: no request at all.
	d := NewDescent(sender, sender.Root())
	if _, ok := d.Request(); ok || len(d.Faulty()) != 0 {
		t.Error("a descent with equal roots asks something")
	}
	if n := len(AppendRoot(nil, sender.Root(), 8)); n != 11 {
		t.Errorf("the fault-free path sends %d bytes", n)
	}
}

func TestDescentRejectsCorruptAnswersAndRoots(t *testing.T) {
	data := randomData(100_000, 7)
	sender := mustBuild(t, data, Segment(1000))
	receiver := mustBuild(t, corrupt(data, 1000, []int{3, 60}, 8), Segment(1000))

	d := NewDescent(receiver, sender.Root())
	req, _ := d.Request()
	ans, _ := sender.Answer(req)
	ans.Hashes[1].Lo ^= 1 // corrupted on the way
	if err := d.Answer(ans); !errors.Is(err, ErrCorruptAnswer) {
		t.Fatalf("corrupt answer: %v", err)
	}
	again, _ := d.Request()
	if !slices.Equal(again.Nodes, req.Nodes) {
		t.Fatal("the request changed after a corrupt answer")
	}
	ans, _ = sender.Answer(again)
	if err := d.Answer(ans); err != nil {
		t.Fatal(err)
	}
	if err := d.Answer(ans); !errors.Is(err, ErrProtocol) {
		t.Errorf("answer without a request: %v", err)
	}

	// A corrupted root: no answer can match it, and the descent stops at
	// the first round instead of wandering.
	bad := sender.Root()
	bad.Lo ^= 1 << 40
	d = NewDescent(receiver, bad)
	for range 5 {
		req, ok := d.Request()
		if !ok {
			t.Fatal("gave up")
		}
		ans, _ := sender.Answer(req)
		if err := d.Answer(ans); !errors.Is(err, ErrCorruptAnswer) {
			t.Fatalf("corrupt root: %v", err)
		}
	}
	// The wrong number of hashes.
	d = NewDescent(receiver, sender.Root())
	d.Request()
	if err := d.Answer(Answer{Hashes: []csum.Value{{}}}); !errors.Is(err, ErrProtocol) {
		t.Errorf("short answer: %v", err)
	}
	// A receiver whose tree is stale: its root differs, its data does not.
	stale := sender.Clone()
	stale.nodes[0] ^= 1
	d = NewDescent(stale, sender.Root())
	req, _ = d.Request()
	ans, _ = sender.Answer(req)
	if err := d.Answer(ans); !errors.Is(err, ErrInconsistent) {
		t.Errorf("stale tree: %v", err)
	}
}

func TestAnswerRefusesBadRequests(t *testing.T) {
	tr := mustBuild(t, randomData(10_000, 9), Segment(1000))
	for _, nodes := range [][]int{{-1}, {tr.Nodes()}, {0, math.MaxInt}, make([]int, tr.Nodes()+1)} {
		if _, err := tr.Answer(Request{Nodes: nodes}); !errors.Is(err, ErrIndex) {
			t.Errorf("request %v: %v", nodes[:min(len(nodes), 3)], err)
		}
	}
}

func TestCriticalPath(t *testing.T) {
	data := randomData(77_777, 10)
	for _, seg := range []int{1000, 2048, 77_777} {
		sender := mustBuild(t, data, Segment(seg))
		path := sender.CriticalPath()
		if len(path) != sender.Segments() || path[0] != sender.Root() {
			t.Fatalf("critical path of %d for %d segments", len(path), sender.Segments())
		}
		back, _, err := DecodeCritical(AppendCritical(nil, path, 8))
		if err != nil || !slices.Equal(back, path) {
			t.Fatalf("critical path wire form: %v", err)
		}
		for j := range sender.Segments() {
			receiver := mustBuild(t, corrupt(data, seg, []int{j}, uint64(j)), Segment(seg))
			if got, err := receiver.LocateCritical(path); err != nil || got != j {
				t.Fatalf("segment %d corrupted, the paper's localization says %d (%v)", j, got, err)
			}
		}
		if got, _ := sender.LocateCritical(path); got != -1 {
			t.Errorf("nothing corrupted, yet %d", got)
		}
	}
	sender := mustBuild(t, data, Segment(1000))
	receiver := mustBuild(t, corrupt(data, 1000, []int{5, 50}, 11), Segment(1000))
	got, _ := receiver.LocateCritical(sender.CriticalPath())
	if got != 5 && got != 50 {
		t.Errorf("two corrupted segments, the paper's localization gives %d", got)
	}
	if _, err := receiver.LocateCritical(nil); !errors.Is(err, ErrShape) {
		t.Errorf("short path: %v", err)
	}
}

func TestProofs(t *testing.T) {
	for _, h := range []string{"xxh3", "xxh3-128", "crc64"} {
		data := randomData(50_000, 12)
		tr := mustBuild(t, data, Segment(999), UseHash(h))
		for j := range tr.Segments() {
			p, err := tr.Prove(j)
			if err != nil {
				t.Fatal(err)
			}
			back, size, err := DecodeProof(p.AppendBinary(nil, tr.Hash().Size()))
			if err != nil || size != tr.Hash().Size() {
				t.Fatal(err)
			}
			off, n := tr.SegmentRange(j)
			seg := data[off : off+n]
			if err := VerifyProof(tr.Hash(), tr.Root(), back, seg); err != nil {
				t.Fatalf("%s segment %d: %v", h, j, err)
			}
			// Any change fails: the data, a sibling, the index, the root.
			bad := slices.Clone(seg)
			bad[len(bad)/2] ^= 4
			if VerifyProof(tr.Hash(), tr.Root(), back, bad) == nil {
				t.Fatalf("%s: changed segment %d verifies", h, j)
			}
			if len(back.Siblings) > 0 {
				s := back
				s.Siblings = slices.Clone(back.Siblings)
				s.Siblings[len(s.Siblings)-1].Lo ^= 1
				if VerifyProof(tr.Hash(), tr.Root(), s, seg) == nil {
					t.Fatalf("%s: changed sibling verifies", h)
				}
			}
			moved := back
			moved.Segment = (j + 1) % tr.Segments()
			if moved.Segment != j && VerifyProof(tr.Hash(), tr.Root(), moved, seg) == nil {
				t.Fatalf("%s: segment %d verifies as %d", h, j, moved.Segment)
			}
			root := tr.Root()
			root.Hi ^= 1 << 63
			if VerifyProof(tr.Hash(), root, back, seg) == nil {
				t.Fatalf("%s: another root verifies", h)
			}
		}
	}
	tr := mustBuild(t, []byte("x"))
	if _, err := tr.Prove(1); !errors.Is(err, ErrIndex) {
		t.Errorf("Prove out of range: %v", err)
	}
	for _, p := range []Proof{{Segment: 0, Segments: 0}, {Segment: 5, Segments: 5}, {Segment: 0, Segments: 4}} {
		if VerifyProof(tr.Hash(), tr.Root(), p, []byte("x")) == nil {
			t.Errorf("proof %+v verifies", p)
		}
	}
}
