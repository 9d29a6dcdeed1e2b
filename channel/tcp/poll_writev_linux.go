package tcp

import (
	"syscall"
	"unsafe"
)

// haveWritev: Linux has writev as a system call the syscall package can
// make without libc.
const haveWritev = true

// writev1 is one non-blocking writev of w.iov; true: never wait for the
// poller.
func (w *tryWriter) writev1(fd uintptr) bool {
	for {
		n, _, e := syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&w.iov[0])), uintptr(len(w.iov)))
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			w.err = e
		} else {
			w.n = int(n)
		}
		return true
	}
}
