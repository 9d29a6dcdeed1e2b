//go:build !unix

package channel

import (
	"io"
	"net"
)

// newPollReader returns c: off Unix a link's reader blocks in the
// runtime's read, without polling (poll_unix.go says why it polls).
func newPollReader(c net.Conn) io.Reader { return c }
