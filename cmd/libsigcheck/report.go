//go:build mpi

package main

/*
#include "sc.h"
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/sigcheck/sigcheck/internal/ranksum"
	"github.com/sigcheck/sigcheck/sig"
)

// A finding is one thing the library found wrong, as the summary lists it.
type finding = ranksum.Finding

// maxFindings bounds what a rank keeps in detail; the counters count all.
const maxFindings = 64

var found struct {
	sync.Mutex
	list       []finding
	undecoded  map[string]int // why, for datatypes passed through
	suppressed int
}

func noteUndecodable(err error) {
	found.Lock()
	defer found.Unlock()
	if found.undecoded == nil {
		found.undecoded = map[string]int{}
	}
	why := strings.TrimPrefix(err.Error(), errUndecodable.Error()+": ")
	if len(found.undecoded) < maxFindings {
		found.undecoded[why]++
	}
}

func recordQuiet(f finding, lines []string) {
	found.Lock()
	defer found.Unlock()
	f.Lines = lines
	if len(found.list) < maxFindings {
		found.list = append(found.list, f)
		return
	}
	found.suppressed++
}

func record(f finding, lines []string) {
	found.Lock()
	f.Lines = lines
	if len(found.list) < maxFindings {
		found.list = append(found.list, f)
		found.Unlock()
		writeLines(lines)
		return
	}
	found.suppressed++
	found.Unlock()
}

// where says where a call happened, as MUST and ITAC name it.
func where(call string, comm string, me, peer, tag C.int, peerRole string) string {
	s := fmt.Sprintf("%s on rank %d of %s", call, me, comm)
	switch {
	case tag >= 0:
		s += fmt.Sprintf(", %s rank %d, tag %d", peerRole, peer, tag)
	case peer >= 0:
		s += fmt.Sprintf(", against rank %d", peer)
	}
	return s
}

// scGoMismatch reports that a message's type signature does not fit the
// receive (or, for a collective, that two ranks disagree). h is the other
// side's stamp; desc its datatype's description, if it had to be sent; me
// and mine are this side's datatype and count. sender says whether the
// other side is the sender (point-to-point) or a peer of a collective.
//
//export scGoMismatch
func scGoMismatch(call, comm *C.char, me, peer, worldPeer, tag C.int, h *C.sc_hdr, desc *C.char, descLen C.int,
	mine C.uint32_t, mineCount C.uint64_t, rule C.int) {
	theirs := predefinedByID(uint32(h.typeid))
	if theirs == nil && descLen > 0 {
		t, err := sig.ParseDatatype(C.GoStringN(desc, descLen))
		if err == nil {
			theirs = t
		}
	}
	ours := typeByID(uint32(mine))
	r := sig.PointToPoint
	sendRole, recvRole, peerRole := "sender", "receiver", "from"
	if rule != 0 {
		r = sig.Collective
		sendRole, recvRole, peerRole = fmt.Sprintf("rank %d", peer), fmt.Sprintf("rank %d", me), "against"
	}
	f := finding{Kind: "type mismatch", Call: C.GoString(call), Comm: C.GoString(comm),
		Rank: int(me), Peer: int(peer), WorldPeer: int(worldPeer), Tag: int(tag), Element: -1}
	head := "type mismatch: " + where(f.Call, f.Comm, me, peer, tag, peerRole)
	var err error
	switch {
	case theirs != nil && ours != nil:
		err = sig.Match(alg, theirs, uint64(h.count), ours, uint64(mineCount), r)
	case ours != nil:
		st := sig.Stamp{Sig: sig.Sig{Value: uint64(h.sig), Count: uint64(h.elems)}, Bytes: uint64(h.bytes), Class: sig.Class(h.class)}
		err = st.Check(alg, ours, uint64(mineCount), r)
	default:
		err = errors.New("this side's datatype is no longer known")
	}
	var m *sig.MismatchError
	if !errors.As(err, &m) {
		// The signatures differed but the full match found no difference:
		// the sender's stamp was damaged, or its description did not come.
		detail := fmt.Sprintf("the %s's signature %#x over %d elements does not fit %d elements here", sendRole,
			uint64(h.sig), uint64(h.elems), uint64(mineCount))
		if err != nil {
			detail += " (" + err.Error() + ")"
		}
		f.Detail = detail
		record(f, []string{head, "  " + detail})
		return
	}
	lines := []string{head}
	lines = append(lines, mismatchLines(m, sendRole, recvRole)...)
	if m.Index >= 0 {
		f.Element = m.Index
	}
	parts := make([]string, 0, len(lines)-1)
	for _, l := range lines[1:] {
		parts = append(parts, strings.Join(strings.Fields(l), " "))
	}
	f.Detail = strings.Join(parts, "; ")
	record(f, lines)
}

// mismatchLines says what sigcheck match says of m, in lines.
func mismatchLines(m *sig.MismatchError, sendRole, recvRole string) []string {
	q := func(n uint64, noun string) string {
		if n == 1 {
			return fmt.Sprintf("1 %s", noun)
		}
		return fmt.Sprintf("%d %ss", n, noun)
	}
	switch {
	case m.BySize:
		return []string{fmt.Sprintf("  (%s) the %s has %s, the %s %d; byte and packed data are matched by size",
			m.Rule, sendRole, q(m.SendBytes, "byte"), recvRole, m.RecvBytes)}
	case m.Index < 0:
		return []string{fmt.Sprintf("  (%s) the %s has %s, the %s %d, and the signatures differ",
			m.Rule, sendRole, q(m.SendElems, "element"), recvRole, m.RecvElems)}
	}
	first := fmt.Sprintf("  (%s) first difference at element %d (zero-based)", m.Rule, m.Index)
	if m.Truncated {
		first += fmt.Sprintf(": the %s has %s, the %s only %d", sendRole, q(m.SendElems, "element"), recvRole, m.RecvElems)
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	side := func(role string, el sig.Element) {
		if el.Type == nil {
			fmt.Fprintf(tw, "  %s\t(none: this side ends before it)\t\n", role)
			return
		}
		fmt.Fprintf(tw, "  %s\t%s\tat %s, byte %d\n", role, el.Type.Name(), el.Path, el.Disp)
	}
	side(sendRole, m.Send)
	side(recvRole, m.Recv)
	tw.Flush()
	lines := []string{first}
	lines = append(lines, strings.Split(strings.TrimRight(b.String(), "\n"), "\n")...)
	return append(lines,
		fmt.Sprintf("  %s type map:  %s", sendRole, m.SendMap),
		fmt.Sprintf("  %s type map: %s", recvRole, m.RecvMap))
}

// scGoCorrupt reports a message whose data bytes do not hash to the
// sender's checksum.
//
//export scGoCorrupt
func scGoCorrupt(call, comm *C.char, me, peer, worldPeer, tag C.int, bytes, want, got C.uint64_t, injected, how C.int) {
	kind := "corrupt message"
	switch how {
	case 1:
		kind = "repaired message"
	case -1:
		kind = "unrepaired message"
	case -2:
		kind = "unrepaired message"
	case -3:
		kind = "unrepaired message"
	}
	f := finding{Kind: kind, Call: C.GoString(call), Comm: C.GoString(comm),
		Rank: int(me), Peer: int(peer), WorldPeer: int(worldPeer), Tag: int(tag), Element: -1}
	f.Detail = fmt.Sprintf("%d data bytes hash to %016x, the sender's to %016x", uint64(bytes), uint64(got), uint64(want))
	if injected != 0 {
		f.Detail += " (a bit flipped by SIGCHECK_INJECT)"
	}
	switch how {
	case 1:
		f.Detail += "; repaired from the sender's copy before the receive returned"
	case -1:
		f.Detail += "; not repaired: the sender no longer keeps a copy (SIGCHECK_KEEP MiB of the newest messages are kept)"
	case -2:
		f.Detail += "; not repaired: the sender's copy did not hash to its checksum either"
	case -3:
		f.Detail += "; not repaired: it was checked after its receive returned (it completed before an earlier receive from the same source and tag)"
	}
	lines := []string{kind + ": " + where(f.Call, f.Comm, me, peer, tag, "from"), "  " + f.Detail}
	if how == 1 {
		// Repaired: the program goes on as if nothing happened, and its
		// output stays its own; the summary keeps the finding.
		recordQuiet(f, lines)
		return
	}
	record(f, lines)
}

// callNames name the counters' rows (sc.h's SC_CALL_*).
var callNames = [...]string{"send", "recv", "sendrecv", "bcast", "reduce", "allreduce", "scan",
	"gather", "scatter", "allgather", "alltoall", "other"}

var whyNames = [...]string{"undecodable datatype", "communicator without shadow", "intercommunicator collective", "unchecked sender"}

//export scGoFinalize
func scGoFinalize(c *C.sc_counters, multi C.int) {
	if cfg.summary == "" {
		return
	}
	s := ranksum.Summary{Rank: world.rank, Size: world.size, Mode: modeName(cfg.mode),
		Checked: map[string]uint64{}, Sent: map[string]uint64{}, Unchecked: map[string]uint64{},
		Findings:   []finding{},
		Mismatches: uint64(c.mismatches), Corrupt: uint64(c.corrupt), Injected: uint64(c.injected),
		Repaired: uint64(c.repaired), Unrepaired: uint64(c.unrepaired_late + c.unrepaired_gone),
		Threads: "single, funneled or serialized"}
	if multi != 0 {
		s.Threads = "multiple"
	}
	for i, name := range callNames {
		if n := uint64(c.checked[i]); n > 0 {
			s.Checked[name] = n
		}
		if n := uint64(c.sent[i]); n > 0 {
			s.Sent[name] = n
		}
		for j, why := range whyNames {
			if n := uint64(c.unchecked[i][j]); n > 0 {
				s.Unchecked[name+": "+why] = n
			}
		}
	}
	s.Replication = repSummary()
	found.Lock()
	s.Findings = append(s.Findings, found.list...)
	s.Suppressed, s.Undecoded = found.suppressed, found.undecoded
	found.Unlock()
	s.Encryption = encSummary()
	b, err := json.MarshalIndent(s, "", "  ")
	if err == nil {
		err = os.MkdirAll(cfg.summary, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(cfg.summary, fmt.Sprintf("rank-%d.json", world.rank)), append(b, '\n'), 0o644)
	}
	if err != nil {
		writeLines([]string{fmt.Sprintf("rank %d: cannot write the summary: %v", world.rank, err)})
	}
}

func modeName(m int) string {
	switch m {
	case C.SC_CHECKSUM:
		return "checksum"
	case C.SC_REPAIR:
		return "repair"
	}
	return "types"
}
