package tcp

import (
	"bytes"
	"context"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// The pieces link.write tries (takePiece), consumed by what the
// socket took each time (consume), cover the buffers in order, exactly:
// every byte once, no piece over writePiece bytes (and pieceSlack) or len(tc.pieces)
// buffers, no empty buffer in a piece (a write of nothing can fail on a
// closed connection), and a piece taken whole or in part always makes
// progress — for any buffers, empty ones among them, and any amounts
// taken. (Buffers of no bytes at all are not generated: a frame always
// has its header.)
func TestWritePieces(t *testing.T) {
	backing := make([]byte, 4*writePiece)
	for i := range backing {
		backing[i] = byte(i*7 + i>>8)
	}
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 40 // each moves megabytes
	props := gopter.NewProperties(params)
	props.Property("pieces cover the buffers", prop.ForAll(func(lens []int, takes []int) bool {
		var tc link
		var want []byte
		off := 0
		for _, n := range lens {
			n %= len(backing) - off + 1
			tc.bufs = append(tc.bufs, backing[off:off+n])
			want = append(want, backing[off:off+n]...)
			off = (off + n) % (len(backing) / 2)
		}
		if len(want) == 0 {
			return true
		}
		var got []byte
		for step := 0; len(tc.bufs) > 0; step++ {
			k := tc.takePiece(writePiece)
			sum := 0
			for _, b := range tc.piece {
				if len(b) == 0 {
					t.Logf("an empty buffer in a piece")
					return false
				}
				sum += len(b)
			}
			if sum != k || k > writePiece+pieceSlack || len(tc.piece) > len(tc.pieces) || k == 0 {
				t.Logf("piece of %d bytes (said %d) in %d buffers", sum, k, len(tc.piece))
				return false
			}
			before := len(got)
			n := k // what the socket took: all of the piece, or a part
			if len(takes) > 0 {
				n = takes[step%len(takes)] % (k + 1)
				if n == 0 {
					n = 1
				}
			}
			for _, b := range tc.piece {
				k := min(n-(len(got)-before), len(b))
				got = append(got, b[:k]...)
			}
			consume(&tc.bufs, n)
			if step > len(want)+len(lens) {
				t.Logf("no end")
				return false
			}
		}
		return bytes.Equal(got, want)
	},
		gen.SliceOfN(20, gen.OneGenOf(gen.Const(0), gen.IntRange(0, 300), gen.IntRange(writePiece-64, writePiece+pieceSlack+64), gen.IntRange(0, 2*writePiece))),
		gen.SliceOf(gen.IntRange(0, 2*writePiece)),
	))
	props.TestingRun(t)
}

// consume drops the empty buffers after what went: a frame whose
// payload is empty, written whole, leaves nothing to write.
func TestConsumeEmptyTail(t *testing.T) {
	hdr := []byte("header")
	bufs := net.Buffers{hdr, nil, {}}
	consume(&bufs, len(hdr))
	if len(bufs) != 0 {
		t.Fatalf("%d buffers left, want none", len(bufs))
	}
	bufs = net.Buffers{hdr, nil, []byte("x")}
	consume(&bufs, len(hdr))
	if len(bufs) != 1 || string(bufs[0]) != "x" {
		t.Fatalf("left %q, want [x]", bufs)
	}
}

// A frame of a whole piece of payload goes in one write with its header,
// and a 1 MiB frame in four: no write of a header's few bytes alone.
func TestWritePieceSizes(t *testing.T) {
	hdr := make([]byte, 32)
	for _, c := range []struct {
		payload int
		want    []int
	}{
		{writePiece, []int{writePiece + 32}},
		{writePiece - 32, []int{writePiece}},
		{1 << 20, []int{writePiece, writePiece, writePiece, writePiece + 32}},
		{0, []int{32}},
	} {
		var tc link
		tc.bufs = net.Buffers{hdr, make([]byte, c.payload)}
		var got []int
		for len(tc.bufs) > 0 {
			k := tc.takePiece(writePiece)
			got = append(got, k)
			consume(&tc.bufs, k)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("a frame of %d bytes of payload went in writes of %v bytes, want %v", c.payload, got, c.want)
		}
	}
}

// slowDeadlineConn takes its time to set a deadline other than none, as
// a watch's callback on a busy machine can.
type slowDeadlineConn struct{ net.Conn }

func (c slowDeadlineConn) SetWriteDeadline(t time.Time) error {
	if !t.IsZero() {
		time.Sleep(50 * time.Millisecond)
	}
	return c.Conn.SetWriteDeadline(t)
}

// A write's watch that fires as the write ends has set its deadline
// when unwatch returns: the next send's deadline, set after, stands, and
// its write goes through. (Left to run on after unwatch, the watch set its
// deadline 50 ms later, over the next send's, which then failed.)
func TestWatchDoneBeforeStop(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go io.Copy(io.Discard, b)
	tc := &link{c: slowDeadlineConn{a}}
	ctx, cancel := context.WithCancel(context.Background())
	w := tc.watch(ctx)
	cancel() // done just as the write ended
	tc.unwatch(w)
	tc.setDeadline(context.Background()) // the next send's: none
	time.Sleep(100 * time.Millisecond)
	if _, err := tc.c.Write([]byte("next frame")); err != nil {
		t.Fatalf("the next send's write: %v", err)
	}
}
