//go:build !unix

package tcp

import (
	"io"
	"net"
)

// newPollReader returns c: off Unix a link's reader blocks in the
// runtime's read, without polling (poll_unix.go says why it polls).
func newPollReader(c net.Conn) io.Reader { return c }

// setPark has no polling reader to hook.
func setPark(io.Reader, func()) bool { return false }

// tryWriter would write what a socket takes at once; off Unix there is
// none, and a link's control frames all go from the control goroutine.
type tryWriter struct{}

func newTryWriter(net.Conn) *tryWriter { return nil }

func (*tryWriter) write([]byte) (int, error) { return 0, nil }

func (*tryWriter) writev([][]byte) (int, error) { return 0, nil }
