package tcp

import (
	"net"
	"testing"
)

func TestCongestionChoice(t *testing.T) {
	addr := func(s string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(s), Port: 1} }
	for _, c := range []struct {
		cfg           string
		local, remote string
		want          string
	}{
		{"", "127.0.0.1", "127.0.0.1", sameHostCongestion},
		{"", "127.0.0.1", "127.0.0.2", sameHostCongestion}, // both loopback
		{"", "::1", "::1", sameHostCongestion},
		{"", "10.0.0.5", "10.0.0.5", sameHostCongestion}, // one host's own address
		{"", "10.0.0.5", "10.0.0.6", ""},                 // another host: the system's
		{CongestionSystem, "127.0.0.1", "127.0.0.1", ""},
		{"cubic", "10.0.0.5", "10.0.0.6", "cubic"},
	} {
		cfg := Config{Congestion: c.cfg}
		if got := congestion(&cfg, addr(c.local), addr(c.remote)); got != c.want {
			t.Errorf("Congestion %q, %s to %s: %q, want %q", c.cfg, c.local, c.remote, got, c.want)
		}
	}
	// A link whose addresses are not TCP's (a Dial hook's own conn) keeps
	// what it has.
	cfg := Config{}
	if got := congestion(&cfg, &net.UnixAddr{Name: "a"}, &net.UnixAddr{Name: "b"}); got != "" {
		t.Errorf("a Unix link: %q, want none", got)
	}
}
