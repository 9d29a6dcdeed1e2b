package channel

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/sig"
)

func TestTyped(t *testing.T) {
	eps, _ := NewLocal(2)
	defer eps[0].Close()
	defer eps[1].Close()
	send := sig.Must(sig.ParseDatatype("struct([1, 3], [0, 8], [int, double])"))
	same := sig.Must(sig.ParseDatatype("struct([1, 3], [0, 8], [int, double])"))
	wrong := sig.Must(sig.ParseDatatype("struct([1, 6], [0, 8], [int, float])"))
	ctx := context.Background()
	for _, base := range []string{"endpoint", "merkle", "checksum"} {
		var c0, c1 Comm = eps[0], eps[1]
		switch base {
		case "merkle":
			c0, _ = WithMerkle(eps[0])
			c1, _ = WithMerkle(eps[1])
		case "checksum":
			c0, _ = WithChecksum(eps[0])
			c1, _ = WithChecksum(eps[1])
		}
		t0, t1 := WithTypes(c0, nil), WithTypes(c1, nil)
		data := pattern(int(send.Size())*1000, 4)
		buf := make([]byte, len(data))
		// Matching types: delivered; the receive may expect more (prefix rule).
		go t0.Send(ctx, 1, 2, data, send, 1000)
		if st, err := t1.Recv(ctx, 0, 2, make([]byte, len(data)*2), same, 2000); err != nil || st.Len != len(data) || st.Tag != 2 {
			t.Errorf("%s: matching: %+v %v", base, st, err)
		}
		// Same size, other types: refused, located.
		go t0.Send(ctx, 1, 3, data, send, 1000)
		_, err := t1.Recv(ctx, 0, 3, buf, wrong, 1000)
		var m *sig.MismatchError
		if !errors.As(err, &m) || !errors.Is(err, sig.ErrMismatch) || m.Index != 1 || m.Send.Type.Name() != "double" || m.Recv.Type.Name() != "float" {
			t.Errorf("%s: mismatch: %v", base, err)
		}
		// An untyped message to a typed receive.
		go c0.Send(ctx, 1, 4, data)
		if _, err := t1.Recv(ctx, 0, 4, buf, send, 1000); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: untyped: %v", base, err)
		}
		// Data of the wrong length for the datatype.
		if err := t0.Send(ctx, 1, 5, data[1:], send, 1000); err == nil {
			t.Errorf("%s: short data sent", base)
		}
	}
}

// TestTypedOnDup: typed messaging over a duplicate is on the duplicate's
// matching space, not the endpoint's (WithTypes used to take context 0
// for a duplicate of an Endpoint).
func TestTypedOnDup(t *testing.T) {
	eps, _ := NewLocal(2)
	defer eps[0].Close()
	defer eps[1].Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dt := sig.Must(sig.ParseDatatype("int"))
	t0, t1 := WithTypes(Dup(eps[0]), nil), WithTypes(Dup(eps[1]), nil)
	must(t, t0.Send(ctx, 1, 3, []byte("typed"[:4]), dt, 1))
	must(t, eps[0].Send(ctx, 1, 3, []byte("plain")))
	buf := make([]byte, 8)
	st, err := eps[1].Recv(ctx, 0, AnyTag, buf)
	must(t, err)
	if got := string(buf[:st.Len]); got != "plain" {
		t.Fatalf("the endpoint's receive got %q", got)
	}
	if _, err := t1.Recv(ctx, 0, 3, buf[:4], dt, 1); err != nil {
		t.Fatalf("the duplicate's typed receive: %v", err)
	}
}
