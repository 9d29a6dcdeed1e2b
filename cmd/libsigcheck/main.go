//go:build mpi

package main

/*
#cgo pkg-config: ompi-c
#cgo CFLAGS: -O2 -Wall -Wno-unused-function
#include "sc.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/sig"
)

// main is never run: the library is built with -buildmode=c-shared and
// loaded into an MPI program.
func main() {}

// alg is the algebra every process uses: the header carries a signature
// of it and no spec, so it is fixed here rather than chosen per run.
var alg = sig.Default()

// config is what the environment asked for; the launcher (sigcheck
// mpirun) sets the same variables that a user loading the library by hand
// sets.
type config struct {
	mode    int     // C.SC_TYPES, C.SC_CHECKSUM, C.SC_REPAIR
	abort   bool    // -on-error abort
	inject  float64 // probability per received message of one flipped bit
	seed    uint64
	summary string // directory for rank-N.json
}

var cfg config

func parseConfig(getenv func(string) string) (config, error) {
	c := config{mode: C.SC_TYPES, abort: true, seed: 1, summary: getenv("SIGCHECK_SUMMARY")}
	switch v := getenv("SIGCHECK_CHECK"); v {
	case "", "types":
	case "checksum":
		c.mode = C.SC_CHECKSUM
	case "repair":
		c.mode = C.SC_REPAIR
	default:
		return c, fmt.Errorf("SIGCHECK_CHECK=%q: want types, checksum or repair", v)
	}
	switch v := getenv("SIGCHECK_ON_ERROR"); v {
	case "", "abort":
	case "report":
		c.abort = false
	default:
		return c, fmt.Errorf("SIGCHECK_ON_ERROR=%q: want abort or report", v)
	}
	// Under SIGCHECK_REPLICATE the injector flips send buffers, on the
	// replicas it aims at, for the replicas' vote to catch (rep.go).
	if v := getenv("SIGCHECK_INJECT"); v != "" && getenv("SIGCHECK_REPLICATE") == "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r < 0 || r > 1 {
			return c, fmt.Errorf("SIGCHECK_INJECT=%q: want a probability from 0 to 1", v)
		}
		if r > 0 && c.mode == C.SC_TYPES {
			return c, fmt.Errorf("SIGCHECK_INJECT=%s flips data bits, which only SIGCHECK_CHECK=checksum or repair looks at", v)
		}
		c.inject = r
	}
	if v := getenv("SIGCHECK_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return c, fmt.Errorf("SIGCHECK_SEED=%q: want a non-negative integer", v)
		}
		c.seed = s
	}
	return c, nil
}

// scGoInit reads the configuration at MPI_Init. It returns the mode, or 0
// after printing why the environment is wrong.
//
//export scGoInit
func scGoInit(rank, size C.int, abort *C.int, inject *C.double, seed *C.uint64_t) C.int {
	c, err := parseConfig(os.Getenv)
	if err != nil {
		if rank == 0 {
			writeLines([]string{err.Error()})
		}
		return 0
	}
	cfg = c
	world.rank, world.size = int(rank), int(size)
	*abort = 0
	if c.abort {
		*abort = 1
	}
	*inject = C.double(c.inject)
	*seed = C.uint64_t(c.seed ^ uint64(rank)*0x9e3779b97f4a7c15)
	return C.int(c.mode)
}

var world struct{ rank, size int }

// writeLines writes lines to standard error in one write, each prefixed
// "sigcheck: ", so that the reports of several ranks never interleave
// within a line.
func writeLines(lines []string) {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("sigcheck: ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	os.Stderr.WriteString(b.String())
}

// sum is the checksum of message data: XXH3-64, from package csum, whose
// fused copy and checksum keeps repair's copies.
var sum = func() *csum.Algorithm {
	a, err := csum.Lookup("xxh3")
	if err != nil {
		panic(err)
	}
	return a
}()

//export scGoHash
func scGoHash(p unsafe.Pointer, n C.size_t) C.uint64_t {
	if n == 0 {
		return C.uint64_t(sum.Sum(nil).Lo)
	}
	return C.uint64_t(sum.Sum(unsafe.Slice((*byte)(p), int(n))).Lo)
}

// scGoCopyHash copies n bytes from src to dst and returns their checksum,
// in one pass. dst is repair's ring, not read again unless a receiver
// asks: the copy streams past the cache.
//
//export scGoCopyHash
func scGoCopyHash(dst, src unsafe.Pointer, n C.uint64_t) C.uint64_t {
	if n == 0 {
		return C.uint64_t(sum.Sum(nil).Lo)
	}
	d := unsafe.Slice((*byte)(dst), int(n))
	s := unsafe.Slice((*byte)(src), int(n))
	return C.uint64_t(sum.CopySumCold(d, s).Lo)
}
