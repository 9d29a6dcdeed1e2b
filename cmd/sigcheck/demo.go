package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/sig"
	"github.com/sigcheck/sigcheck/tree"
)

func runDemo(e *env, args []string) error {
	fs := flags(e, "demo", "Shows, on built-in data and in a few seconds, what datatype signatures catch\n"+
		"that a byte count does not, how cheap they are, and why the hash matters.")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	w := e.stdout
	alg := sig.Default()

	fmt.Fprintln(w, "sigcheck demo: datatype signatures catch what byte counts miss, Merkle trees find and repair corruption")
	fmt.Fprintln(w)
	send := sig.Must(sig.ParseDatatype("struct([1, 3], [0, 8], [int, double])"))
	recv := sig.Must(sig.ParseDatatype("struct([1, 6], [0, 8], [int, float])"))
	const n = 1000
	fmt.Fprintf(w, "1. A sender posts %d particles as    %s\n", n, send)
	fmt.Fprintf(w, "   and the receiver expects them as %s.\n", recv)
	fmt.Fprintf(w, "   Byte count check (what MPICH and Open MPI do): %d bytes sent, %d expected: accepted.\n",
		send.Size()*n, recv.Size()*n)
	err := sig.Match(alg, send, n, recv, n, sig.PointToPoint)
	var m *sig.MismatchError
	if !errors.As(err, &m) {
		return fmt.Errorf("demo: expected a mismatch, got %v", err)
	}
	fmt.Fprintf(w, "   Signature check (%s, %d bits on the wire): refused.\n", alg, alg.Bits())
	e2 := *e
	e2.stdout = &indent{w: w, prefix: "   ", start: true}
	printMismatch(&e2, m)
	fmt.Fprintln(w)

	v := sig.Must(sig.Vector(1e9, 3, 5, sig.Double))
	const copies = 1e6
	cold := timeIt(func() {
		fresh := sig.Must(sig.Vector(1e9, 3, 5, sig.Double)) // no cached signature
		sig.Of(alg, fresh, copies)
	})
	s, _ := sig.Of(alg, v, copies)
	prefix := timeIt(func() { sig.Prefix(alg, v, copies, 2e15) })
	fmt.Fprintf(w, "2. Signatures come from descriptions, not data: %s × %d\n", v, int64(copies))
	fmt.Fprintf(w, "   holds %d elements; its signature 0x%s takes %v to compute,\n", s.Count, hexValue(s.Value, alg.Bits()), cold)
	fmt.Fprintf(w, "   and that of its first 2·10^15 elements, for a longer receive, %v.\n", prefix)
	fmt.Fprintln(w)

	panel := sig.Panel()
	fmt.Fprintf(w, "3. The hash matters. Collisions among %d distinct type signatures, 16-bit hashes:\n", len(panel))
	rows := [][]string{{"   algebra", "collisions", "random mapping"}}
	var ratio []float64
	for _, spec := range []string{"xor-bs1:w=16,m=1", "mmm-bs1:w=16,m=1", "crc16-ccitt-false", "gfd:w=8,m=2"} {
		a, _ := sig.ParseAlgebra(spec)
		q := sig.MeasureQuality(a, panel)
		rows = append(rows, []string{"   " + spec, pct(q.Collisions), pct(q.Expected)})
		ratio = append(ratio, q.Collisions/q.Expected)
	}
	table(w, rows, map[int]bool{1: true, 2: true})
	fmt.Fprintf(w, "   Gropp's xor-bs1 and the modular sum mmm-bs1 collide %.1f and %.1f times as often as\n", ratio[0], ratio[1])
	fmt.Fprintln(w, "   chance; gfd does as well as a CRC, and its concatenation and repetition are O(1).")
	fmt.Fprintln(w)
	if err := demoTree(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := demoChannel(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Try: sigcheck match 'vector(4, 2, 3, double)' 'contiguous(8, double)' -send-count 2")
	fmt.Fprintln(w, "     sigcheck manifest -parity 4 FILE; sigcheck verify FILE; sigcheck repair FILE")
	fmt.Fprintln(w, "     sigcheck run -transport tcp -protect none,checksum,merkle -inject 1e-2 bw")
	return nil
}

// demoTree corrupts a 64 MiB transfer in a few places and shows the
// descent finding every corrupted segment for a few kilobytes, where the
// paper's critical path sends 256 KiB a fault, and parity rebuilding them.
func demoTree(w io.Writer) error {
	const size = 64 << 20
	sent := make([]byte, size)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < size; i += 8 {
		binary.LittleEndian.PutUint64(sent[i:], r.Uint64())
	}
	got := bytes.Clone(sent)
	for _, off := range []int{1 << 20, 1<<20 + 3000, 40 << 20} {
		got[off] ^= 0x10 // one flipped bit in segments 512, 513 and 20480
	}
	var sender, receiver *tree.Tree
	build := timeIt(func() { sender, _ = tree.Build(sent) })
	receiver, err := tree.Build(got)
	if err != nil {
		return err
	}
	parity, err := tree.NewParity(sent, tree.DefaultSegment, 2)
	if err != nil {
		return err
	}
	size8 := sender.Hash().Size()
	wire := len(tree.AppendRoot(nil, sender.Root(), size8))
	d := tree.NewDescent(receiver, sender.Root())
	for {
		req, more := d.Request()
		if !more {
			break
		}
		q, err := req.AppendBinary(nil)
		if err != nil {
			return err
		}
		ans, err := sender.Answer(req)
		if err != nil {
			return err
		}
		wire += len(q) + len(ans.AppendBinary(nil, size8))
		if err := d.Answer(ans); err != nil {
			return err
		}
	}
	critical := len(tree.AppendCritical(nil, sender.CriticalPath(), size8))
	fmt.Fprintf(w, "4. A 64 MiB transfer arrives with a bit flipped in 3 places. Merkle trees of its %d segments\n", sender.Segments())
	fmt.Fprintf(w, "   (%v to build, %.1f GB/s) disagree at the root; the receiver asks for the children of\n", build.Round(10*time.Microsecond), float64(size)/build.Seconds()/1e9)
	fmt.Fprintf(w, "   the nodes that differ, level by level: segments %v found in %d rounds, %d bytes\n", d.Faulty(), d.Rounds(), wire)
	fmt.Fprintf(w, "   on the wire. The paper's critical path sends %d KiB per round and finds one per round.\n", critical>>10)
	if err := parity.Repair(got, receiver, d.Faulty(), d.Expected); err != nil {
		return err
	}
	fmt.Fprintf(w, "   Reed–Solomon parity (%.1f%% more data) rebuilds them, checked against the sender's hashes:\n",
		100*float64(len(parity.Shards)*parity.Segment)/size)
	fmt.Fprintf(w, "   the data is whole again: %v.\n", bytes.Equal(got, sent) && receiver.Root() == sender.Root())
	return nil
}

// timeIt returns the median time of a few runs of fn.
func timeIt(fn func()) time.Duration {
	var ds []time.Duration
	for range 7 {
		start := time.Now()
		fn()
		ds = append(ds, time.Since(start))
	}
	for i := range ds {
		for j := i + 1; j < len(ds); j++ {
			if ds[j] < ds[i] {
				ds[i], ds[j] = ds[j], ds[i]
			}
		}
	}
	return ds[len(ds)/2].Round(10 * time.Nanosecond)
}

// indent prefixes every line written through it.
type indent struct {
	w      io.Writer
	prefix string
	start  bool // the next byte begins a line
}

func (in *indent) Write(p []byte) (int, error) {
	var out []byte
	for _, c := range p {
		if in.start {
			out = append(out, in.prefix...)
		}
		out = append(out, c)
		in.start = c == '\n'
	}
	if _, err := in.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// demoChannel runs all-gathers among four ranks in this process over a
// link that flips a bit in one frame of 20: unprotected, then on a
// Merkle layer, and counts the blocks that arrived wrong.
func demoChannel(w io.Writer) error {
	const p, block, rounds = 4, 1 << 20, 10
	eps, err := channel.NewLocal(p, channel.WithInjector(&channel.Injector{Rate: 0.05, Seed: 7}))
	if err != nil {
		return err
	}
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	data := func(r int) []byte {
		b := make([]byte, block)
		rng := rand.New(rand.NewPCG(uint64(r), 3))
		for i := 0; i < block; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
		}
		return b
	}
	blocks := make([][]byte, p)
	for r := range p {
		blocks[r] = data(r)
	}
	// run gathers on every rank and returns the blocks that came wrong.
	run := func(comms []channel.Comm) (int, error) {
		var wrong atomic.Int64
		errs := make(chan error, p)
		for r, c := range comms {
			go func() {
				all := make([]byte, p*block)
				for range rounds {
					if err := channel.Allgather(ctx, c, blocks[r], all); err != nil {
						errs <- err
						return
					}
					for j := range p {
						if !bytes.Equal(all[j*block:(j+1)*block], blocks[j]) {
							wrong.Add(1)
						}
					}
				}
				errs <- channel.Flush(ctx, c)
			}()
		}
		var first error
		for range p {
			if err := <-errs; err != nil && first == nil {
				first = err
				cancel()
			}
		}
		return int(wrong.Load()), first
	}
	plain := make([]channel.Comm, p)
	for r, ep := range eps {
		plain[r] = ep
	}
	fmt.Fprintf(w, "5. Four ranks (goroutines here; processes over TCP alike) all-gather 1 MiB blocks %d times,\n", rounds)
	fmt.Fprintln(w, "   over a link that flips one bit in one frame of 20:")
	before := sumStats(eps)
	wrong, err := run(plain)
	if err != nil {
		return err
	}
	s := sumStats(eps)
	fmt.Fprintf(w, "   unprotected:  %d of %d blocks delivered wrong (%d frames damaged), and no rank knows\n",
		wrong, rounds*p*p, s.Injected-before.Injected)
	merkle := make([]channel.Comm, p)
	for r, ep := range eps {
		if merkle[r], err = channel.WithMerkle(ep); err != nil {
			return err
		}
	}
	before = s
	took := timeIt(func() { wrong, err = run(merkle) })
	if err != nil {
		return err
	}
	s = sumStats(eps)
	fmt.Fprintf(w, "   Merkle layer: %d of %d blocks wrong; %d frames damaged, %d caught, %d segments resent (%d bytes), in %v\n",
		wrong, rounds*p*p, s.Injected-before.Injected, s.Detected-before.Detected, s.Repaired-before.Repaired,
		s.Resent-before.Resent, took.Round(time.Millisecond))
	fmt.Fprintln(w, "   Every block is checked against the root of the rank that owns it, not a neighbour's copy.")
	return nil
}

func sumStats(eps []*channel.Endpoint) channel.Stats {
	var s channel.Stats
	for _, ep := range eps {
		x := ep.Stats()
		s.Injected += x.Injected
		s.Detected += x.Detected
		s.Repaired += x.Repaired
		s.Resent += x.Resent
	}
	return s
}
