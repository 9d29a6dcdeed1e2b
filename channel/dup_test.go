package channel

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// TestDupSeparatesMessages: a message on a duplicate is received only on
// it, even by an AnyTag receive with the same tag on the original, and
// the other way round; a duplicate made late by the receiver still gets
// the messages sent on it before.
func TestDupSeparatesMessages(t *testing.T) {
	for tr, ranks := range map[string]func(testing.TB, int) []Comm{"local": local, "tcp": tcpRanks} {
		t.Run(tr, func(t *testing.T) {
			eps := ranks(t, 2)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for _, base := range []func(c Comm) Comm{
				func(c Comm) Comm { return c },
				func(c Comm) Comm {
					l, err := WithMerkle(c)
					must(t, err)
					return l
				},
			} {
				c0, c1 := base(eps[0]), base(eps[1])
				d0 := Dup(c0.(Duplicator))
				must(t, d0.Send(ctx, 1, 7, []byte("on the duplicate")))
				must(t, c0.Send(ctx, 1, 7, []byte("on the original")))
				d1 := Dup(c1.(Duplicator)) // made after its message came
				buf := make([]byte, 64)
				st, err := c1.Recv(ctx, AnySource, AnyTag, buf)
				must(t, err)
				if got := buf[:st.Len]; !bytes.Equal(got, []byte("on the original")) {
					t.Fatalf("original received %q", got)
				}
				st, err = d1.Recv(ctx, 0, 7, buf)
				must(t, err)
				if got := buf[:st.Len]; !bytes.Equal(got, []byte("on the duplicate")) {
					t.Fatalf("duplicate received %q", got)
				}
				must(t, Flush(ctx, c0))
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
