//go:build mpi

package mpi

/*
#include "shim.h"
*/
import "C"

import (
	"unsafe"
)

// stage is the staging ring: C memory that medium payloads are copied
// into, so that their Send returns before MPI has sent them (send.go).
// Space is taken in order at the head and given back in the same order
// at the tail, once MPI has finished with the oldest send: a ring, so
// that taking and giving back cost a few additions, and the memory a
// window of sends uses is touched in turn rather than scattered. Every
// field is under mpiMu. The memory is allocated at the first medium
// send: an endpoint that sends none has none.
type stage struct {
	mem        unsafe.Pointer // stageSize bytes
	head, tail int64          // positions in an endless stream: the bytes in use are [tail, head), at position mod stageSize
	recs       []stageRec     // the sends, oldest first from first (a ring of stageRecs)
	reqs       request        // their requests, one per record
	first, n   int
	drop       func(dst int, err error) // breaks the link of a send that failed
}

// stageRec is one payload's place in the ring.
type stageRec struct {
	start, end int64
	dst        int
	posted     bool // its send was started (or failed to be): done once its request is
}

const (
	// stageSize bounds the bytes of medium payloads on their way out of
	// one endpoint: beyond it, Send waits for the oldest to be taken.
	stageSize = 16 << 20
	stageRecs = 256
)

// reserve takes n bytes of the ring for a payload to dst, returning the
// record's index and the memory, or nil if there is no room yet.
func (s *stage) reserve(n, dst int) (int, unsafe.Pointer) {
	if s.mem == nil {
		s.mem = cmalloc(stageSize)
		s.reqs = newRequests(stageRecs)
		s.recs = make([]stageRec, stageRecs)
	}
	s.reap()
	if s.n == stageRecs {
		return 0, nil
	}
	pos := s.head
	off := pos % stageSize
	if off+int64(n) > stageSize { // it does not fit before the end: it goes at the start
		pos += stageSize - off
		off = 0
	}
	if pos+int64(n)-s.tail > stageSize {
		return 0, nil
	}
	i := (s.first + s.n) % stageRecs
	s.recs[i] = stageRec{start: pos, end: pos + int64(n), dst: dst}
	*reqAt(s.reqs, i) = C.sc_null_request()
	s.n++
	s.head = pos + int64(n)
	return i, unsafe.Add(s.mem, off)
}

// request is the MPI request of record i.
func (s *stage) request(i int) request { return reqAt(s.reqs, i) }

// posted says that record i's send was started, or will never be: its
// space is given back once its request (if any) completes.
func (s *stage) posted(i int) { s.recs[i].posted = true }

// reap gives back the space of the oldest sends MPI is done with, and
// reports whether the ring is empty. A send that failed breaks its link
// (from a goroutine of its own: this runs under mpiMu, and dropping a
// link takes it).
func (s *stage) reap() bool {
	for s.n > 0 {
		r := &s.recs[s.first]
		if !r.posted {
			break
		}
		if req := reqAt(s.reqs, s.first); !isNull(req) {
			done, _, _, errc := test(req)
			if !done {
				break
			}
			if err := mpiError("MPI_Isend", errc); err != nil {
				go s.drop(r.dst, err)
			}
		}
		s.tail = r.end
		s.first = (s.first + 1) % stageRecs
		s.n--
	}
	return s.n == 0
}

// free gives the ring's memory back; every send from it is done.
func (s *stage) free() {
	if s.mem != nil {
		cfree(s.mem)
		freeRequests(s.reqs)
		s.mem, s.reqs = nil, nil
	}
}
