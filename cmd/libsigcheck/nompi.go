//go:build !mpi

package main

import (
	"fmt"
	"os"
)

// Without the mpi build tag there is no MPI to wrap: say how to build the
// library instead of building a program that would do nothing.
func main() {
	fmt.Fprintln(os.Stderr, "libsigcheck is a library for LD_PRELOAD: build it with\n"+
		"  go build -buildmode=c-shared -tags mpi -o libsigcheck.so ./cmd/libsigcheck\n"+
		"or let sigcheck mpirun build it.")
	os.Exit(2)
}
