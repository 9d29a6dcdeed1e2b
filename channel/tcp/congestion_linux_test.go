package channel

import (
	"context"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// linkCongestion returns the congestion control of ep's link to peer.
func linkCongestion(t *testing.T, ep *Endpoint, peer int) string {
	t.Helper()
	rc, err := ep.e.tx.(*tcpTx).conn(peer).c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var cc string
	var gerr error
	if err := rc.Control(func(fd uintptr) { cc, gerr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION) }); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	return cc
}

// Over loopback both ends of every link use Reno unless told otherwise;
// a choice the kernel refuses fails ConnectTCP, saying which.
func TestLoopbackCongestion(t *testing.T) {
	connect := func(cc string) ([]*Endpoint, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return ConnectLoopback(ctx, 2, TCPConfig{Congestion: cc})
	}
	eps, err := connect("")
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(eps) // not sooner: a rank that closes takes its peer's link down
	for r, ep := range eps {
		if got := linkCongestion(t, ep, 1-r); got != sameHostCongestion {
			t.Errorf("rank %d's link: %q, want %q", r, got, sameHostCongestion)
		}
	}
	if _, err := connect("no-such-algorithm"); err == nil {
		t.Error("ConnectLoopback with an unknown congestion control: no error")
	}
}
