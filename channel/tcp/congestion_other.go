//go:build !linux

package tcp

import (
	"fmt"
	"net"
)

// setCongestion does nothing: a socket's congestion control is chosen
// here on Linux only.
func setCongestion(c *net.TCPConn, name string) error { return nil }

// checkCongestion refuses a choice this system cannot make.
func checkCongestion(name string) error {
	return fmt.Errorf("tcp: TCP congestion control %q: chosen per socket only on Linux (use %q)", name, CongestionSystem)
}
