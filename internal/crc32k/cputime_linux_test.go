package crc32k

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time the calling thread has used. On a
// shared machine the wall clock counts the time other processes hold the
// core; the kernel's speed on one core is bytes over this.
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
