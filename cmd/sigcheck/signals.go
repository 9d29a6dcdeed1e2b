package main

import (
	"os"
	"syscall"
)

// stopSignals stop verify and repair as Ctrl-C does, so that a repair
// told to end (by a shell's kill, a logout, a job scheduler) removes its
// temporary files first. SIGKILL cannot be caught: what it leaves, verify
// says.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
