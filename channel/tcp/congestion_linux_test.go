package tcp

import (
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// linkCongestion returns the congestion control of t's link to peer.
func linkCongestion(tb testing.TB, t *tx, peer int) string {
	tb.Helper()
	rc, err := t.conn(peer).c.(syscall.Conn).SyscallConn()
	if err != nil {
		tb.Fatal(err)
	}
	var cc string
	var gerr error
	if err := rc.Control(func(fd uintptr) { cc, gerr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION) }); err != nil {
		tb.Fatal(err)
	}
	if gerr != nil {
		tb.Fatal(gerr)
	}
	return cc
}

// Over loopback both ends of every link use Reno unless told otherwise;
// a choice the kernel refuses fails Connect, saying which.
func TestLoopbackCongestion(t *testing.T) {
	eps, txs, err := startTxs(2, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(eps) // not sooner: a rank that closes takes its peer's link down
	for r, tx := range txs {
		if got := linkCongestion(t, tx, 1-r); got != sameHostCongestion {
			t.Errorf("rank %d's link: %q, want %q", r, got, sameHostCongestion)
		}
	}
	if _, _, err := startTxs(2, Config{Congestion: "no-such-algorithm"}); err == nil {
		t.Error("Loopback with an unknown congestion control: no error")
	}
}
