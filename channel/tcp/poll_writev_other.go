//go:build unix && !linux

package tcp

// haveWritev: elsewhere the system call goes through libc, which the
// syscall package does not offer for writev: sends arm their watch and
// write through the runtime (tx.Send).
const haveWritev = false

func (w *tryWriter) writev1(uintptr) bool { return true }
