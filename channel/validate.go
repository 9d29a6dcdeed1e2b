package channel

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/sigcheck/sigcheck/tree"
)

// Standalone validation, the paper's validate_sender/validate_receiver:
// for data moved by other means (a non-blocking transfer, a file copy, a
// shared file system), the two sides run ValidateSender and
// ValidateReceiver over any Comm. Only the root crosses when the copies
// agree; otherwise the receiver descends the sender's tree, gets every
// corrupted segment at once, and checks each against the sender's hash.
// Both sides must use the same tree options; one validation at a time
// between a pair of ranks.

// Reserved tags of validation.
const (
	tagValidateUp   = ReservedTag + 32 // receiver → sender
	tagValidateDown = ReservedTag + 33 // sender → receiver
)

// What the receiver says, the first byte of its messages.
const (
	valOK      = 0 // done
	valAsk     = 1 // then a tree.Request
	valResend  = 2 // then uvarint segments
	valGiveUp  = 3 // the receiver failed
	maxValMsgs = 1 << 16
)

// ValidateSender serves dst's ValidateReceiver for data until it is
// satisfied or gives up.
func ValidateSender(ctx context.Context, c Comm, dst int, data []byte, opts ...tree.Option) error {
	c = sys(c)
	t, err := tree.Build(data, opts...)
	if err != nil {
		return err
	}
	size := t.Hash().Size()
	if err := c.Send(ctx, dst, tagValidateDown, tree.AppendRoot(nil, t.Root(), size)); err != nil {
		return err
	}
	// The longest a receiver can say: two nodes per segment, or every
	// segment, each a uvarint of at most 10 bytes.
	buf := make([]byte, 16+20*t.Segments())
	for range maxValMsgs {
		st, err := c.Recv(ctx, dst, tagValidateUp, buf)
		if err != nil {
			return err
		}
		msg := buf[:st.Len]
		if len(msg) == 0 {
			return fmt.Errorf("%w: empty validation message from rank %d", ErrProtocol, dst)
		}
		var reply []byte
		switch msg[0] {
		case valOK:
			return nil
		case valGiveUp:
			return fmt.Errorf("%w: rank %d gave up validating", ErrCorrupted, dst)
		case valAsk:
			var q tree.Request
			if err := q.UnmarshalBinary(msg[1:]); err != nil {
				return err
			}
			a, err := t.Answer(q)
			if err != nil {
				return err
			}
			reply = a.AppendBinary(nil, size)
		case valResend:
			segs, err := parseSegments(msg[1:], t.Segments())
			if err != nil {
				return err
			}
			for _, j := range segs {
				off, n := t.SegmentRange(j)
				reply = append(reply, data[off:off+max(n, 0)]...)
			}
		default:
			return fmt.Errorf("%w: validation message %d from rank %d", ErrProtocol, msg[0], dst)
		}
		if err := c.Send(ctx, dst, tagValidateDown, reply); err != nil {
			return err
		}
	}
	return fmt.Errorf("%w: validation with rank %d does not end", ErrProtocol, dst)
}

// ValidateReceiver checks data against src's copy (src runs
// ValidateSender) and repairs it in place. It returns the segments that
// were corrupted (none when the copies agreed).
func ValidateReceiver(ctx context.Context, c Comm, src int, data []byte, opts ...tree.Option) ([]int, error) {
	c = sys(c)
	t, err := tree.Build(data, opts...)
	if err != nil {
		return nil, err
	}
	size := t.Hash().Size()
	rootMsg := make([]byte, 3+16)
	st, err := c.Recv(ctx, src, tagValidateDown, rootMsg)
	if err != nil {
		return nil, err
	}
	root, _, err := tree.DecodeRoot(rootMsg[:st.Len])
	if err != nil {
		return nil, err
	}
	giveUp := func(err error) ([]int, error) {
		c.Send(ctx, src, tagValidateUp, []byte{valGiveUp})
		return nil, err
	}
	var repaired []int
	for round := 0; round < 8; round++ {
		if t.Root() == root {
			return repaired, c.Send(ctx, src, tagValidateUp, []byte{valOK})
		}
		d := tree.NewDescent(t, root)
		for {
			q, more := d.Request()
			if !more {
				break
			}
			b, _ := q.AppendBinary([]byte{valAsk})
			if err := c.Send(ctx, src, tagValidateUp, b); err != nil {
				return nil, err
			}
			ans := make([]byte, 3+10+len(q.Nodes)*size)
			st, err := c.Recv(ctx, src, tagValidateDown, ans)
			if err != nil {
				return giveUp(err)
			}
			a, _, err := tree.DecodeAnswer(ans[:st.Len])
			if err == nil {
				err = d.Answer(a)
			}
			if err != nil {
				return giveUp(err)
			}
		}
		faulty := d.Faulty()
		if len(faulty) == 0 {
			return giveUp(fmt.Errorf("%w: the roots differ but no segment does", ErrCorrupted))
		}
		b := binary.AppendUvarint([]byte{valResend}, uint64(len(faulty)))
		want := 0
		for _, j := range faulty {
			b = binary.AppendUvarint(b, uint64(j))
			_, n := t.SegmentRange(j)
			want += int(max(n, 0))
		}
		if err := c.Send(ctx, src, tagValidateUp, b); err != nil {
			return nil, err
		}
		segs := make([]byte, want)
		if _, err := c.Recv(ctx, src, tagValidateDown, segs); err != nil {
			return giveUp(err)
		}
		for _, j := range faulty {
			off, n := t.SegmentRange(j)
			n = max(n, 0)
			expected, _ := d.Expected(j)
			saved := append([]byte(nil), data[off:off+n]...)
			copy(data[off:off+n], segs[:n])
			segs = segs[n:]
			t.Update(data, j)
			if t.Node(t.Leaf(j)) != expected {
				copy(data[off:off+n], saved) // not what the sender has: keep ours
				t.Update(data, j)
				continue
			}
			repaired = append(repaired, j)
		}
	}
	return giveUp(fmt.Errorf("%w: still differs from rank %d after 8 rounds", ErrCorrupted, src))
}

func parseSegments(b []byte, n int) ([]int, error) {
	cnt, k := binary.Uvarint(b)
	if k <= 0 || cnt > uint64(len(b)) {
		return nil, fmt.Errorf("%w: segment list", ErrProtocol)
	}
	b = b[k:]
	out := make([]int, 0, cnt)
	for range cnt {
		j, k := binary.Uvarint(b)
		if k <= 0 || j >= uint64(n) {
			return nil, fmt.Errorf("%w: segment %d of %d", ErrProtocol, j, n)
		}
		out = append(out, int(j))
		b = b[k:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the segment list", ErrProtocol, len(b))
	}
	return out, nil
}
