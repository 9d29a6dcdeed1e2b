//go:build mpi

package main

// Replication, the Go side: the settings (SIGCHECK_REPLICATE and its
// companions), where each process runs (which replica of which rank),
// the hash of message data the replicas vote on, and the reports.

/*
#include "sc.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
	"unsafe"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/internal/ranksum"
)

var repCfg repConfig

// scGoRepInit reads the settings at MPI_Init. It returns 0 when
// replication is off, 1 when on (out filled), or -1 after printing why the
// environment is wrong.
//
//export scGoRepInit
func scGoRepInit(rank, size C.int, out *C.sc_rep_cfg) C.int {
	c, err := parseRepConfig(os.Getenv)
	if err == nil && c.r > 0 && int(size)%c.r != 0 {
		err = fmt.Errorf("SIGCHECK_REPLICATE=%d: the job has %d ranks, not a multiple of %d (run %d·n ranks for n ranks of the application)",
			c.r, size, c.r, c.r)
	}
	if err == nil && c.testHookHosts != nil && len(c.testHookHosts) != int(size) {
		err = fmt.Errorf("SIGCHECK_TEST_HOSTS names %d nodes for %d ranks", len(c.testHookHosts), size)
	}
	if err != nil {
		if rank == 0 {
			writeLines([]string{err.Error()})
		}
		return -1
	}
	if c.r == 0 {
		return 0
	}
	repCfg = c
	out.r = C.int(c.r)
	out.protocol = C.SC_REP_MSGPLUSHASH
	if c.protocol == protoAllToAll {
		out.protocol = C.SC_REP_ALLTOALL
	}
	out.report = 0
	if !cfg.abort {
		out.report = 1
	}
	out.inject = C.double(c.inject)
	out.inject_mask = C.uint64_t(c.replicas)
	out.seed = C.uint64_t(c.seed ^ uint64(rank)*0x9e3779b97f4a7c15)
	out.wait = C.double(c.wait)
	out.perturb = 0
	if c.perturb {
		out.perturb = 1
	}
	return 1
}

// scGoRepHost returns the node name the test hook gives world rank w, or
// -1 when there is no hook.
//
//export scGoRepHost
func scGoRepHost(w C.int, buf *C.char, n C.int) C.int {
	if repCfg.testHookHosts == nil || int(w) < 0 || int(w) >= len(repCfg.testHookHosts) {
		return -1
	}
	return C.int(copy(unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n)-1), repCfg.testHookHosts[w]))
}

// scGoRepPlace fills replica and app, by world rank, from the nodes'
// names (size of them, each in a field of width bytes).
//
//export scGoRepPlace
func scGoRepPlace(names *C.char, width, size, r C.int, replica, app *C.int) C.int {
	raw := unsafe.Slice((*byte)(unsafe.Pointer(names)), int(width)*int(size))
	nodes := make([]string, size)
	for i := range nodes {
		f := raw[i*int(width) : (i+1)*int(width)]
		if j := strings.IndexByte(string(f), 0); j >= 0 {
			f = f[:j]
		}
		nodes[i] = string(f)
	}
	ps, warn, err := places(nodes, int(r))
	if err != nil {
		writeLines([]string{"SIGCHECK_REPLICATE: " + err.Error()})
		return -1
	}
	if warn != "" && world.rank == 0 {
		writeLines([]string{"SIGCHECK_REPLICATE: " + warn + "; placing them by rank order instead"})
	}
	if world.rank >= 0 && world.rank < len(nodes) {
		repNode = nodes[world.rank]
	}
	rs := unsafe.Slice((*C.int)(replica), int(size))
	as := unsafe.Slice((*C.int)(app), int(size))
	for i, p := range ps {
		rs[i], as[i] = C.int(p.Replica), C.int(p.Virtual)
	}
	return 0
}

// hash128 is what the replicas vote on: XXH3-128, as channel/replicate's
// default, over the data bytes of a message.
var hash128 = func() *csum.Algorithm {
	a, err := csum.Lookup("xxh3-128")
	if err != nil {
		panic(err)
	}
	return a
}()

//export scGoHash128
func scGoHash128(p unsafe.Pointer, n C.size_t, out *C.uint64_t) {
	var v csum.Value
	if n == 0 {
		v = hash128.Sum(nil)
	} else {
		v = hash128.Sum(unsafe.Slice((*byte)(p), int(n)))
	}
	o := unsafe.Slice((*C.uint64_t)(out), 2)
	o[0], o[1] = C.uint64_t(v.Lo), C.uint64_t(v.Hi)
}

// Kinds of replication findings (scGoRepFinding's kind).
const (
	repCorrected  = 1 // this replica's copy was voted out and replaced
	repDisagree   = 2 // r = 2: the copies differ, and neither can be trusted
	repNoMajority = 3 // no copy has two replicas behind it and more than any other
	repDiverged   = 4 // the replicas did not make the same calls
	repTimeout    = 5 // another replica did not answer in time
)

// scGoRepFinding reports what the replicas' vote found on one message
// (tag ≥ 0) or collective (tag < 0): the call, the communicator, this
// replica's rank there and the sender's, and the claims as detail.
//
//export scGoRepFinding
func scGoRepFinding(kind C.int, call, comm *C.char, me, peer, tag C.int, detail *C.char) {
	f := finding{Call: C.GoString(call), Comm: C.GoString(comm), Rank: int(me), Peer: int(peer), WorldPeer: -1,
		Tag: int(tag), Element: -1, Detail: C.GoString(detail)}
	head := ""
	switch kind {
	case repCorrected:
		f.Kind = "corrected message"
		if tag < 0 {
			f.Kind = "corrected result"
		}
	case repDisagree:
		f.Kind = "replicas disagree"
	case repNoMajority:
		f.Kind = "no majority"
	case repDiverged:
		f.Kind = "replicas diverged"
	default:
		f.Kind = "replica timeout"
	}
	who := fmt.Sprintf("replica %d of %d", int(C.sc_rep_replica), repCfg.r)
	switch {
	case f.Call == "":
		head = fmt.Sprintf("%s: rank %d (%s)", f.Kind, int(C.sc_rep_app), who)
	case tag >= 0:
		head = fmt.Sprintf("%s: %s on rank %d of %s (%s), from rank %d, tag %d", f.Kind, f.Call, me, f.Comm, who, peer, tag)
	default:
		head = fmt.Sprintf("%s: %s on rank %d of %s (%s)", f.Kind, f.Call, me, f.Comm, who)
	}
	lines := []string{head, "  " + f.Detail}
	if kind == repCorrected {
		recordQuiet(f, lines)
		return
	}
	record(f, lines)
}

// repNode is where this process ran, as its placement saw it.
var repNode string

// repUncompared names sc_rep_counters' uncompared reasons (rep.h).
var repUncompared = [...]string{
	"messages on a communicator with no cross-replica twin (intercommunicator, MPI_Comm_idup, spawn, or one the replicas made differently)",
	"collectives whose results are not voted on (neighbourhood, MPI_Alltoallw, MPI_Ireduce_scatter)",
	"receives that failed (truncated), or of messages past 2 GiB",
	"persistent sends the injector skips (they go from the application's buffer)",
	"Fortran calls with no entry point of the library, whose MPI_COMM_WORLD is the real world (attributes, names, MPI_File_open, spawn, connect)",
}

// repSummary is this process's replication summary, or nil when
// replication is off.
func repSummary() *ranksum.Replication {
	if repCfg.r == 0 {
		return nil
	}
	c := &C.sc_rep_count
	s := &ranksum.Replication{Degree: repCfg.r, Protocol: "msgplushash", Replica: int(C.sc_rep_replica),
		AppRank: int(C.sc_rep_app), AppSize: int(C.sc_rep_n), Node: repNode,
		Compared: uint64(c.compared), Found: uint64(c.found), Corrected: uint64(c.corrected),
		Uncorrectable: uint64(c.uncorrectable), Injected: uint64(c.injected), ClaimsSent: uint64(c.claims_sent),
		CollCompared: uint64(c.coll_compared), CollFound: uint64(c.coll_found), CollCorrected: uint64(c.coll_corrected),
		Agreed: uint64(c.agreed), Wildcards: uint64(c.wildcards), NotCompared: map[string]uint64{}}
	if repCfg.protocol == protoAllToAll {
		s.Protocol = "alltoall"
	}
	for i, why := range repUncompared {
		if n := uint64(c.uncompared[i]); n > 0 {
			s.NotCompared[why] = n
		}
	}
	return s
}
