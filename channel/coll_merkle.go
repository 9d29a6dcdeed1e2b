package channel

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/tree"
)

// End-to-end collectives of a Merkle layer (a view whose protection is
// Merkle's; a checksum layer's run over its checked messages, and an
// unprotected context's are the plain ones). Each hop of a collective is
// already protected (the layer's Send and Recv); what these add is a check
// of every block against the root computed by the rank that owns it, so
// that data corrupted inside a rank that forwards it (in memory, not on
// the wire) is caught too — never trusting one rank's copy of everything,
// as the reference library does with rank 0's receive buffer. Only the
// ranks that need a repair get one, from the owner, all at once.

// testHookCorrupt, if set (tests), damages a block a rank has just
// received from a collective (in memory, where no wire check sees it).
var testHookCorrupt func(c Comm, b []byte)

func (l *view) treeOpts() []tree.Option {
	return append(l.p.treeOpts[:len(l.p.treeOpts):len(l.p.treeOpts)], tree.Workers(1))
}

func (l *view) rootOf(b []byte) (csum.Value, error) {
	t, err := tree.Build(b, l.treeOpts()...)
	if err != nil {
		return csum.Value{}, err
	}
	return t.Root(), nil
}

// Bcast broadcasts buf from root, checking every rank's copy against the
// root's tree root. On an unprotected context it is BinomialBcast.
func (l *view) Bcast(ctx context.Context, root int, buf []byte) error {
	if l.p == nil {
		return BinomialBcast(ctx, l, root, buf)
	}
	if !l.sys {
		return l.reserved().(*view).Bcast(ctx, root, buf)
	}
	seq := l.nextColl()
	if err := checkRank(l, root, "root"); err != nil {
		return err
	}
	if l.p.mode != modeMerkle {
		return binomialBcast(ctx, l, seq, root, buf)
	}
	// The root's tree root and length go first: a rank whose buffer is
	// not the root's length takes the data into one that is (so that the
	// broadcast goes on through it to its subtree), and says so in its
	// flag, and both it and the root return ErrCollective.
	hs := l.hashSize()
	rm := make([]byte, 3+hs+8)
	if l.Rank() == root {
		v, err := l.rootOf(buf)
		if err != nil {
			return err
		}
		rm = binary.LittleEndian.AppendUint64(tree.AppendRoot(rm[:0], v, hs), uint64(len(buf)))
	}
	if err := binomialBcast(ctx, l, seq, root, rm); err != nil {
		return err
	}
	want, _, err := tree.DecodeRoot(rm[:3+hs])
	if err != nil {
		return err
	}
	n := binary.LittleEndian.Uint64(rm[3+hs:])
	data := buf
	if n != uint64(len(buf)) {
		if n > MaxMessage {
			return fmt.Errorf("%w: a broadcast of %d bytes", ErrProtocol, n)
		}
		data = make([]byte, n)
	}
	if err := binomialBcast(ctx, l, seq, root, data); err != nil {
		return err
	}
	if l.Rank() != root {
		err := l.bcastCheck(ctx, seq, root, data, want, len(data) != len(buf))
		if err == nil && len(data) != len(buf) {
			err = fmt.Errorf("%w: a broadcast buffer of %d bytes, the root's has %d", ErrCollective, len(buf), n)
		}
		return err
	}
	return l.bcastRepair(ctx, seq, buf, rm[:3+hs])
}

func (l *view) hashSize() int { return l.p.h.Size() }

// bcastCheck is a non-root's side: say whether its copy is right, and
// take the root's until it is.
// A rank whose buffer has the wrong length (misfit) says so with flag 2.
func (l *view) bcastCheck(ctx context.Context, seq uint32, root int, buf []byte, want csum.Value, misfit bool) error {
	tagFlag, tagRoot, tagRepair := collTag(seq, kindE2EFlag), collTag(seq, kindE2ERoot), collTag(seq, kindE2ERepair)
	for round := 0; ; round++ {
		got, err := l.rootOf(buf)
		if err != nil {
			return err
		}
		ok := got == want
		if !ok {
			l.e.stats.detected.Add(1)
		}
		flag := []byte{0}
		switch {
		case !ok:
			flag[0] = 1
		case misfit:
			flag[0] = 2
		}
		if err := l.Send(ctx, root, tagFlag, flag); err != nil {
			return err
		}
		if ok {
			if round > 0 {
				l.e.stats.repaired.Add(1)
			}
			return nil
		}
		if round >= l.p.rounds {
			return fmt.Errorf("%w: broadcast from rank %d still differs after %d rounds", ErrCorrupted, root, round)
		}
		// The root's hash may be what went wrong on the way: it comes again
		// too, straight from the root.
		rm := make([]byte, 3+l.hashSize())
		if err := recvExact(ctx, l, root, tagRoot, rm); err != nil {
			return err
		}
		if want, _, err = tree.DecodeRoot(rm); err != nil {
			return err
		}
		if err := recvExact(ctx, l, root, tagRepair, buf); err != nil {
			return err
		}
	}
}

// bcastRepair is the root's side: hear every rank, resend to those whose
// copy is wrong, all at once, until none is.
func (l *view) bcastRepair(ctx context.Context, seq uint32, buf, rm []byte) (err error) {
	tagFlag, tagRoot, tagRepair := collTag(seq, kindE2EFlag), collTag(seq, kindE2ERoot), collTag(seq, kindE2ERepair)
	var bad, misfits []int
	for range l.Size() - 1 {
		var flag [1]byte
		st, err := l.Recv(ctx, AnySource, tagFlag, flag[:])
		if err != nil {
			return err
		}
		switch flag[0] {
		case 0:
		case 2:
			misfits = append(misfits, st.Source)
		default:
			bad = append(bad, st.Source)
		}
	}
	defer func() {
		if len(misfits) > 0 && err == nil {
			err = fmt.Errorf("%w: ranks %v have broadcast buffers of another length than the root's %d bytes", ErrCollective, misfits, len(buf))
		}
	}()
	for round := 0; len(bad) > 0; round++ {
		if round >= l.p.rounds {
			return fmt.Errorf("%w: ranks %v still differ after %d rounds", ErrCorrupted, bad, round)
		}
		reqs := make([]*Request, 0, 2*len(bad))
		flags := make([][]byte, len(bad))
		for i, r := range bad {
			flags[i] = make([]byte, 1)
			reqs = append(reqs, Isend(ctx, l, r, tagRoot, rm), Isend(ctx, l, r, tagRepair, buf), Irecv(ctx, l, r, tagFlag, flags[i]))
		}
		if err := WaitAll(reqs...); err != nil {
			return err
		}
		next := bad[:0]
		for i, r := range bad {
			if flags[i][0] != 0 {
				next = append(next, r)
			}
		}
		bad = next
	}
	return nil
}

// Allgather gathers every rank's block, each checked against the root its
// owner computed. On an unprotected context it is Allgather's own.
func (l *view) Allgather(ctx context.Context, send, recv []byte) error {
	if l.p == nil {
		return allgather(ctx, l, send, recv)
	}
	if !l.sys {
		return l.reserved().(*view).Allgather(ctx, send, recv)
	}
	seq := l.nextColl()
	p, r, n := l.Size(), l.Rank(), len(send)
	if err := checkAllgather(l, send, recv); err != nil {
		return err
	}
	gather := ringAllgather
	if len(recv) <= bruckMax {
		gather = bruckAllgather
	}
	if l.p.mode != modeMerkle {
		return gather(ctx, l, seq, send, recv)
	}
	tagRoot, tagRepair := collTag(seq, kindE2ERoot), collTag(seq, kindE2ERepair)
	hs := l.hashSize()
	rs := 3 + hs
	mine, err := l.rootOf(send)
	if err != nil {
		return err
	}
	roots := make([]byte, p*rs)
	if err := bruckAllgather(ctx, l, seq, tree.AppendRoot(nil, mine, hs), roots); err != nil {
		return err
	}
	if err := gather(ctx, l, seq, send, recv); err != nil {
		return err
	}
	rootOf := func(i int) csum.Value {
		v, _, _ := tree.DecodeRoot(roots[i*rs : (i+1)*rs])
		return v
	}
	need := make([]bool, p) // blocks this rank must get again from their owners
	check := func() error {
		for i := range p {
			if i == r {
				continue
			}
			v, err := l.rootOf(recv[i*n : (i+1)*n])
			if err != nil {
				return err
			}
			if was := need[i]; v != rootOf(i) {
				if !was {
					l.e.stats.detected.Add(1)
				}
				need[i] = true
			} else if was {
				need[i] = false
				l.e.stats.repaired.Add(1)
			}
		}
		return nil
	}
	if err := check(); err != nil {
		return err
	}
	bits := (p + 7) / 8
	for round := 0; ; round++ {
		// Everyone learns who needs what: p bits from every rank.
		mineBits := make([]byte, bits)
		for i, b := range need {
			if b {
				mineBits[i/8] |= 1 << (i % 8)
			}
		}
		all := make([]byte, p*bits)
		if err := bruckAllgather(ctx, l, seq, mineBits, all); err != nil {
			return err
		}
		wants := func(j, i int) bool { return all[j*bits+i/8]&(1<<(i%8)) != 0 } // rank j needs block i
		any := false
		var reqs []*Request
		for j := range p {
			for i := range p {
				if !wants(j, i) {
					continue
				}
				any = true
				switch {
				case i == r: // mine to resend, with my root (which may have been what went wrong)
					reqs = append(reqs, Isend(ctx, l, j, tagRoot, tree.AppendRoot(nil, mine, hs)),
						Isend(ctx, l, j, tagRepair, send))
				case j == r:
					reqs = append(reqs, irecvExact(ctx, l, i, tagRoot, roots[i*rs:(i+1)*rs]),
						irecvExact(ctx, l, i, tagRepair, recv[i*n:(i+1)*n]))
				}
			}
		}
		if !any {
			return nil
		}
		if round >= l.p.rounds {
			return fmt.Errorf("%w: all-gather blocks still differ after %d rounds", ErrCorrupted, round)
		}
		if err := WaitAll(reqs...); err != nil {
			return err
		}
		if err := check(); err != nil {
			return err
		}
	}
}
