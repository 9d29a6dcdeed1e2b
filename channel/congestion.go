package channel

import "net"

// Congestion control of the TCP links. BBR, the default of many Linux
// systems (this project's test machine among them), paces what a
// connection sends at the rate it has estimated; on a link of a few
// microseconds a ping-pong's bursts leave that estimate wrong for the
// connection's whole life. Over loopback, one launch in two to eight of
// sigcheck run -m 1M:1M latency ran its round trips at about 280 µs
// one-way instead of 100, and stayed there; with Reno or CUBIC, 16
// launches of 16 ran at 98–104. (Measured after the pieces of
// writePiece; before them every launch ran at 205–304.) Protected
// bandwidth rose too: at 1 MiB checksum and Merkle went from 0.84–0.96
// of unprotected to 0.94–0.98 (3 alternating runs).
//
// So a link between two addresses of one host — its traffic never
// leaves the machine, and never loses a packet to congestion — uses
// Reno, which sends a window at once: Linux lets any process choose it,
// where CUBIC needs privilege unless the system allows it. Links to
// other hosts keep the system's choice. TCPConfig.Congestion (or
// SIGCHECK_TCP_CC) says otherwise.
const (
	// CongestionSystem, as TCPConfig.Congestion, leaves every link with
	// the system's congestion control.
	CongestionSystem = "system"
	// sameHostCongestion is what a link within one host uses by default.
	sameHostCongestion = "reno"
)

// congestion returns the congestion control to set on a link of local
// and remote addresses under cfg ("": leave the system's).
func congestion(cfg *TCPConfig, local, remote net.Addr) string {
	switch cc := cfg.Congestion; {
	case cc == CongestionSystem:
		return ""
	case cc != "":
		return cc
	case sameHost(local, remote):
		return sameHostCongestion
	}
	return ""
}

// sameHost says whether a link's two ends are on one host: both loopback
// addresses, or one address.
func sameHost(local, remote net.Addr) bool {
	l, ok1 := local.(*net.TCPAddr)
	r, ok2 := remote.(*net.TCPAddr)
	if !ok1 || !ok2 {
		return false
	}
	return l.IP.IsLoopback() && r.IP.IsLoopback() || l.IP.Equal(r.IP)
}
