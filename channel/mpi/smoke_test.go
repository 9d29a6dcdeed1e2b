//go:build mpi

package mpi_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel/mpi"
)

func TestSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ep, err := mpi.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, p := ep.Rank(), ep.Size()
	for _, n := range []int{0, 1, 100, 16 << 10, 16<<10 + 1, 3<<20 + 7} {
		msg := bytes.Repeat([]byte{byte(r + 1)}, n)
		if err := ep.Send(ctx, (r+1)%p, 1, msg); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, n)
		st, err := ep.Recv(ctx, (r+p-1)%p, 1, buf)
		if err != nil {
			t.Fatal(err)
		}
		if st.Len != n || !bytes.Equal(buf, bytes.Repeat([]byte{byte((r+p-1)%p + 1)}, n)) {
			t.Fatalf("size %d: wrong bytes", n)
		}
	}
	if err := ep.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	ep.Close()
	if err := mpi.Finalize(); err != nil {
		t.Fatal(err)
	}
	t.Log("rank", r, "node", mpi.Node(r))
}
