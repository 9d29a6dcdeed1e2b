package tcp

import (
	"fmt"
	"net"
	"syscall"
)

// setCongestion sets the congestion control of c's socket.
func setCongestion(c *net.TCPConn, name string) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptString(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CONGESTION, name)
	}); err != nil {
		return err
	}
	return serr
}

// checkCongestion says whether this process may give its sockets the
// congestion control name, on a socket of its own: a choice the kernel
// refuses is an error before the job starts, not a link that quietly
// runs with another.
func checkCongestion(name string) error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("tcp: TCP congestion control %q: %w", name, err)
	}
	defer syscall.Close(fd)
	switch err := syscall.SetsockoptString(fd, syscall.IPPROTO_TCP, syscall.TCP_CONGESTION, name); err {
	case nil:
	case syscall.ENOENT:
		return fmt.Errorf("tcp: TCP congestion control %q: not in this kernel (see /proc/sys/net/ipv4/tcp_available_congestion_control, or use %q)", name, CongestionSystem)
	case syscall.EPERM:
		return fmt.Errorf("tcp: TCP congestion control %q: not allowed to this process (see /proc/sys/net/ipv4/tcp_allowed_congestion_control, or use %q)", name, CongestionSystem)
	default:
		return fmt.Errorf("tcp: TCP congestion control %q: %w", name, err)
	}
	return nil
}
