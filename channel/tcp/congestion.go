package tcp

import "net"

// Congestion control of the TCP links. BBR, the default of many Linux
// systems (this project's test machine among them), paces what a
// connection sends at the rate it has estimated; on a link of a few
// microseconds a ping-pong's bursts leave that estimate wrong for the
// connection's whole life. Over loopback, some launches of sigcheck run
// -m 1M:1M latency ran their round trips at several times the one-way
// time of the others, and stayed there; with Reno or CUBIC every launch
// ran at the pace of the fast ones, and protected bandwidth at 1 MiB
// came closer to unprotected. The spread is between launches, so one
// benchmark run does not show it: scripts/tcp-latency.sh, whose rows are
// launches of their own, RUNS of each, does.
//
// So a link between two addresses of one host — its traffic never
// leaves the machine, and never loses a packet to congestion — uses
// Reno, which sends a window at once: Linux lets any process choose it,
// where CUBIC needs privilege unless the system allows it. Links to
// other hosts keep the system's choice. Config.Congestion (or
// SIGCHECK_TCP_CC) says otherwise.
const (
	// CongestionSystem, as Config.Congestion, leaves every link with
	// the system's congestion control.
	CongestionSystem = "system"
	// sameHostCongestion is what a link within one host uses by default.
	sameHostCongestion = "reno"
)

// congestion returns the congestion control to set on a link of local
// and remote addresses under cfg ("": leave the system's).
func congestion(cfg *Config, local, remote net.Addr) string {
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
