//go:build mpi

package main

// SIGCHECK_ENCRYPT=1, the Go side: the settings and the key agreement at
// MPI_Init, a group per communicator (encGroup) made at its first
// MPI_Allgather between nodes, its messages and shared memory through
// crypt.c's MPI calls, and the reports and summary.

/*
#include <sched.h>
#include "sc.h"
int sc_enc_members(MPI_Comm c, int *world, int n);
int sc_enc_split(MPI_Comm c, int color, int key, MPI_Comm *out);
int sc_enc_comm_free(MPI_Comm *c);
int sc_enc_bcast(void *buf, int n, int root, MPI_Comm c);
int sc_enc_allgather_bytes(void *in, int n, void *out, MPI_Comm c);
int sc_enc_scatter_bytes(void *in, int n, void *out, MPI_Comm c);
int sc_enc_sendrecv(void *out, int nout, int dst, void *in, int nin, int src, int tag, MPI_Comm c, int *n);
int sc_enc_send(void *out, int n, int dst, int tag, MPI_Comm c);
int sc_enc_recv(void *in, int nin, int src, int tag, MPI_Comm c, int *n);
int sc_enc_win_alloc(MPI_Comm node, size_t size, void **base, MPI_Win *w);
int sc_enc_win_free(MPI_Win *w);
int sc_enc_node_barrier(MPI_Comm node, MPI_Win w, int has);
int sc_enc_hint(MPI_Comm c, char *buf, int n);
void sc_enc_comm_name(MPI_Comm c, char *buf, int n);
void sc_enc_error_string(int code, char *buf, int n);
extern MPI_Comm sc_enc_world;
*/
import "C"

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sigcheck/sigcheck/channel/encrypt"
	"github.com/sigcheck/sigcheck/internal/ranksum"
)

// enc is the process's encryption state.
var enc struct {
	cfg    encConfig
	rank   int
	nodes  []int  // of each world rank (worldNodes)
	job    []byte // the job key
	ctr    atomic.Uint64
	stats  encStats
	packed atomic.Uint64

	mu     sync.Mutex
	groups map[uintptr]*encHandle
	made   []*encHandle // those with MPI objects, in the order made: MPI_Finalize frees them in it
	next   uintptr

	autoMu    sync.Mutex
	autoSizes [encrypt.HS2 + 1][2]int64 // what Auto ran, for which block sizes ({0, 0}: never)

	frames   atomic.Uint64 // frames from other nodes (testHookTamper)
	nonceMu  sync.Mutex
	nonceLog []byte
}

// maxNonceLog bounds SIGCHECK_TEST_NONCES's list (12 bytes a nonce).
const maxNonceLog = 12 << 20

// mpiErr turns an MPI return code into an error.
func mpiErr(what string, rc C.int) error {
	if rc == 0 {
		return nil
	}
	var buf [512]C.char
	C.sc_enc_error_string(rc, &buf[0], C.int(len(buf)))
	return fmt.Errorf("%s: %s", what, C.GoString(&buf[0]))
}

func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// scGoEncConfig reads the settings at MPI_Init: 1 to encrypt, 0 not to,
// -1 after printing (rank 0) why the environment is wrong.
//
//export scGoEncConfig
func scGoEncConfig(rank C.int) C.int {
	c, err := parseEncConfig(os.Getenv)
	if err != nil {
		if rank == 0 {
			writeLines([]string{err.Error()})
		}
		return -1
	}
	enc.cfg, enc.rank = c, int(rank)
	if !c.on {
		return 0
	}
	return 1
}

// scGoEncStart numbers the nodes and agrees the job key: every rank's
// X25519 public key all-gathered, the job key drawn by rank 0 and
// scattered, each rank's copy sealed under a key only it and rank 0
// derive (enckeys.go). It returns 0, or the exit status after printing why.
//
//export scGoEncStart
func scGoEncStart(rank, size C.int, real, nodes *C.int) C.int {
	p, r := int(size), int(rank)
	fail := func(status C.int, err error) C.int {
		writeLines([]string{fmt.Sprintf("rank %d: SIGCHECK_ENCRYPT: %v", r, err)})
		return status
	}
	reals := make([]int, p)
	for i, v := range unsafe.Slice(real, p) {
		reals[i] = int(v)
	}
	wn, err := worldNodes(reals, enc.cfg.nodes, enc.cfg.mapping)
	if err != nil {
		if r == 0 {
			writeLines([]string{err.Error()})
		}
		return 2
	}
	for i, v := range wn {
		unsafe.Slice(nodes, p)[i] = C.int(v)
	}
	enc.nodes = wn
	enc.groups = map[uintptr]*encHandle{}
	party, err := newKeyParty()
	if err != nil {
		return fail(86, err)
	}
	pubs := make([]byte, p*x25519PublicLen)
	mine := party.public()
	if err := mpiErr("the public keys", C.sc_enc_allgather_bytes(ptr(mine), C.int(len(mine)), ptr(pubs), C.sc_enc_world)); err != nil {
		return fail(86, err)
	}
	tr := keyTranscript(pubs)
	pub := func(i int) []byte { return pubs[i*x25519PublicLen : (i+1)*x25519PublicLen] }
	msgs := make([]byte, p*wrappedLen)
	if r == 0 {
		enc.job = make([]byte, encrypt.KeyLen)
		rand.Read(enc.job)
		for i := 1; i < p; i++ {
			w, err := party.wrapAEAD(pub(i), enc.cfg.secret, tr, i)
			if err != nil {
				return fail(86, err)
			}
			copy(msgs[i*wrappedLen:], sealJobKey(w, enc.job, i, tr))
		}
	}
	got := make([]byte, wrappedLen)
	if err := mpiErr("the job key", C.sc_enc_scatter_bytes(ptr(msgs), wrappedLen, ptr(got), C.sc_enc_world)); err != nil {
		return fail(86, err)
	}
	if r != 0 {
		w, err := party.wrapAEAD(pub(0), enc.cfg.secret, tr, r)
		if err == nil {
			enc.job, err = openJobKey(w, got, r, tr)
		}
		if err != nil {
			return fail(86, err)
		}
	}
	return 0
}

// encHandle is what the library knows of one intracommunicator, from its
// first collective on; its group is made at its first MPI_Allgather
// between nodes.
type encHandle struct {
	id      uintptr
	comm    C.MPI_Comm // the application's
	rank    int
	members []int // world ranks, in the communicator's rank order
	lay     encrypt.Layout

	g        *encGroup
	alg      encrypt.Algorithm
	err      error
	dup      C.MPI_Comm // ours: the frames travel here
	node     *mpiNodeMem
	hasComms bool
}

// scGoEncComm makes the handle of comm (an intracommunicator) and says
// whether its ranks are on several nodes; it makes no MPI call that
// communicates. 0: no handle (a rank outside MPI_COMM_WORLD).
//
//export scGoEncComm
func scGoEncComm(comm C.MPI_Comm, spans *C.int) C.uintptr_t {
	*spans = 1
	var size, rank C.int
	if C.PMPI_Comm_size(comm, &size) != 0 || C.PMPI_Comm_rank(comm, &rank) != 0 || size < 1 {
		return 0
	}
	world := make([]C.int, size)
	if C.sc_enc_members(comm, &world[0], size) != 0 {
		return 0
	}
	members := make([]int, size)
	for i, w := range world {
		members[i] = int(w)
	}
	lay, err := commLayout(enc.nodes, members)
	if err != nil {
		return 0
	}
	if lay.Nodes() == 1 {
		*spans = 0
	}
	enc.mu.Lock()
	defer enc.mu.Unlock()
	enc.next++
	h := &encHandle{id: enc.next, comm: comm, rank: int(rank), members: members, lay: lay}
	enc.groups[h.id] = h
	return C.uintptr_t(h.id)
}

func handleOf(id C.uintptr_t) *encHandle {
	enc.mu.Lock()
	defer enc.mu.Unlock()
	return enc.groups[uintptr(id)]
}

// ensure makes the handle's group, collectively over the communicator:
// our duplicate of it, the communicator of each node's ranks, and the
// key, from the job key and a salt its rank 0 draws and broadcasts with
// the algorithm (the setting, or the communicator's MPI_Info hint), so
// that every rank takes the same.
func (h *encHandle) ensure() error {
	if h.g != nil || h.err != nil {
		return h.err
	}
	h.err = h.make()
	return h.err
}

func (h *encHandle) make() error {
	if err := mpiErr("duplicating the communicator", C.sc_enc_split(h.comm, 0, C.int(h.rank), &h.dup)); err != nil {
		return err
	}
	h.node = &mpiNodeMem{}
	if err := mpiErr("splitting it by node", C.sc_enc_split(h.dup, C.int(h.lay.Node(h.rank)), C.int(h.rank), &h.node.comm)); err != nil {
		C.sc_enc_comm_free(&h.dup)
		return err
	}
	h.hasComms = true
	enc.mu.Lock()
	enc.made = append(enc.made, h)
	enc.mu.Unlock()
	var msg [commSaltLen + 1]byte
	if h.rank == 0 {
		rand.Read(msg[:commSaltLen])
		msg[commSaltLen] = byte(h.hinted())
	}
	if err := mpiErr("the communicator's salt", C.sc_enc_bcast(ptr(msg[:]), C.int(len(msg)), 0, h.dup)); err != nil {
		return err
	}
	h.alg = encrypt.Algorithm(msg[commSaltLen])
	if h.alg < encrypt.Auto || h.alg > encrypt.HS2 {
		return fmt.Errorf("%w: rank 0 named algorithm %d", errProtocol, h.alg)
	}
	key, err := commKey(enc.job, msg[:commSaltLen], h.members)
	if err != nil {
		return err
	}
	aead, err := encrypt.NewAEAD(key)
	if err != nil {
		return err
	}
	prefix := make([]uint32, len(h.members))
	for i, w := range h.members {
		prefix[i] = uint32(w)
	}
	g := &encGroup{w: mpiWire{h.dup}, node: h.node, rank: h.rank, p: len(h.members), lay: h.lay, aead: aead,
		prefix: prefix, ctr: &enc.ctr, stats: &enc.stats}
	if !cfg.abort {
		g.onTamper = func(origins []int, encrypter int) {
			h.reportTamper(&tamperError{origins: origins, encrypter: encrypter, how: "the ciphertext"}, false)
		}
	}
	if enc.cfg.tamper > 0 {
		g.testHookTamper = tamperNth
	}
	if enc.cfg.nonces != "" {
		g.testHookNonce = logNonce
	}
	h.g = g
	return nil
}

// hinted is the algorithm rank 0 asks for: the communicator's MPI_Info
// hint sigcheck_encrypt_alg (MPI_Comm_dup_with_info), else the setting.
func (h *encHandle) hinted() encrypt.Algorithm {
	var buf [64]C.char
	if C.sc_enc_hint(h.comm, &buf[0], C.int(len(buf))) == 0 {
		return enc.cfg.alg
	}
	v := C.GoString(&buf[0])
	a, err := encrypt.ParseAlgorithm(v)
	if err != nil {
		writeLines([]string{fmt.Sprintf("MPI_Info %s=%q on %s: not an algorithm; %v instead", algHintKey, v, h.name(), enc.cfg.alg)})
		return enc.cfg.alg
	}
	return a
}

func (h *encHandle) name() string {
	var buf [C.MPI_MAX_OBJECT_NAME + 32]C.char
	C.sc_enc_comm_name(h.comm, &buf[0], C.int(len(buf)))
	return C.GoString(&buf[0])
}

// free frees the group's MPI objects: collective over the communicator,
// as MPI_Comm_free (whose attribute callback calls it) and MPI_Finalize
// (which frees the groups in the order they were made) are.
func (h *encHandle) free() {
	if h.node != nil {
		h.node.free()
	}
	if h.hasComms {
		C.sc_enc_comm_free(&h.node.comm)
		C.sc_enc_comm_free(&h.dup)
		h.hasComms = false
	}
}

// scGoEncFree forgets a communicator the application freed (when MPI
// finalizes, its objects are gone already).
//
//export scGoEncFree
func scGoEncFree(id C.uintptr_t, finalizing C.int) {
	enc.mu.Lock()
	h := enc.groups[uintptr(id)]
	delete(enc.groups, uintptr(id))
	for i, x := range enc.made {
		if x == h {
			enc.made = append(enc.made[:i], enc.made[i+1:]...)
			break
		}
	}
	enc.mu.Unlock()
	if h != nil && finalizing == 0 {
		h.free()
	}
}

//export scGoEncFinalize
func scGoEncFinalize() {
	// In the order they were made: freeing a window is collective over
	// its node, and the all-gathers that made them came in this order on
	// every rank.
	enc.mu.Lock()
	made := enc.made
	enc.made = nil
	enc.mu.Unlock()
	for _, h := range made {
		h.free()
	}
	if enc.cfg.nonces != "" {
		enc.nonceMu.Lock()
		err := os.WriteFile(filepath.Join(enc.cfg.nonces, fmt.Sprintf("nonces-%d.bin", enc.rank)), enc.nonceLog, 0o644)
		enc.nonceMu.Unlock()
		if err != nil {
			writeLines([]string{fmt.Sprintf("rank %d: SIGCHECK_TEST_NONCES: %v", enc.rank, err)})
		}
	}
}

// scGoEncAllgather runs one MPI_Allgather of m bytes a rank encrypted:
// send and recv are contiguous (crypt.c packed them if the datatypes are
// not). It returns 0, or 1 after reporting why the job must end.
//
//export scGoEncAllgather
func scGoEncAllgather(id C.uintptr_t, send unsafe.Pointer, m C.int64_t, recv unsafe.Pointer, packed C.int) (rc C.int) {
	h := handleOf(id)
	defer func() {
		if x := recover(); x != nil {
			rc = h.reportFailure(fmt.Errorf("internal error: %v", x))
		}
	}()
	if h == nil {
		return h.reportFailure(errors.New("internal: a communicator the library does not know"))
	}
	if err := h.ensure(); err != nil {
		return h.reportFailure(err)
	}
	p, n := h.g.p, int(m)
	a := h.alg
	if a == encrypt.Auto {
		a = encrypt.Choose(h.lay, n)
	}
	if (a == encrypt.HS1 || a == encrypt.HS2) && !h.g.hsFeasible(n) {
		a = encrypt.CRing
	}
	if h.alg == encrypt.Auto {
		noteAuto(a, int64(n))
	}
	err := h.g.run(a, unsafe.Slice((*byte)(send), n), unsafe.Slice((*byte)(recv), p*n))
	if err != nil {
		return h.reportFailure(err)
	}
	if packed != 0 {
		enc.packed.Add(1)
	}
	return 0
}

func noteAuto(a encrypt.Algorithm, m int64) {
	enc.autoMu.Lock()
	r := &enc.autoSizes[a]
	if r[1] == 0 {
		*r = [2]int64{m, m}
	}
	r[0], r[1] = min(r[0], m), max(r[1], m)
	enc.autoMu.Unlock()
}

// scGoEncFail reports a failure of crypt.c's and returns 1.
//
//export scGoEncFail
func scGoEncFail(what *C.char) C.int {
	var h *encHandle
	return h.reportFailure(errors.New(C.GoString(what)))
}

// reportFailure reports an encrypted all-gather that cannot go on, and
// returns 1: the job ends, since the ranks no longer agree on what comes
// next (or, for tampering in abort mode, since SIGCHECK_ON_ERROR says so).
func (h *encHandle) reportFailure(err error) C.int {
	if te, ok := errors.AsType[*tamperError](err); ok {
		h.reportTamper(te, true)
		return 1
	}
	comm, rank := "a communicator", enc.rank
	if h != nil {
		comm, rank = h.name(), h.rank
	}
	f := finding{Kind: "encryption failure", Call: "MPI_Allgather", Comm: comm, Rank: rank, Peer: -1, WorldPeer: -1,
		Tag: -1, Element: -1, Detail: err.Error() + "; the job ends: the ranks no longer agree on what comes next"}
	record(f, []string{"encrypted all-gather failed: " + where(f.Call, f.Comm, C.int(rank), -1, -1, ""), "  " + f.Detail})
	return 1
}

// reportTamper reports a ciphertext that failed authentication: in
// abort mode as the job ends, in report mode as it goes on with the
// blocks left zero.
func (h *encHandle) reportTamper(te *tamperError, ending bool) {
	peer, world := te.encrypter, -1
	if peer >= 0 && peer < len(h.members) {
		world = h.members[peer]
	}
	then := "those blocks are left zero and the job goes on (SIGCHECK_ON_ERROR=report)"
	if ending {
		then = "the job ends (SIGCHECK_ON_ERROR=abort)"
	}
	f := finding{Kind: "tampered ciphertext", Call: "MPI_Allgather", Comm: h.name(), Rank: h.rank, Peer: peer, WorldPeer: world,
		Tag: -1, Element: -1, Detail: fmt.Sprintf("%s did not authenticate: altered on the way, or not sealed by this job for this all-gather; %s",
			strings.TrimPrefix(te.Error(), errTampered.Error()+": "), then)}
	record(f, []string{"tampered ciphertext: " + where(f.Call, f.Comm, C.int(h.rank), C.int(peer), -1, ""), "  " + f.Detail})
}

// tamperNth is testHookTamper for SIGCHECK_TEST_TAMPER=N: it flips a
// byte in the first ciphertext of the N-th frame that this process
// receives from another node, as an adversary on the wire would.
func tamperNth(f *encrypt.Frame) {
	for _, pc := range f.Pieces {
		if pc.Sealed {
			if enc.frames.Add(1) == enc.cfg.tamper {
				pc.Data[len(pc.Data)/2] ^= 0x20
			}
			return
		}
	}
}

// logNonce is testHookNonce for SIGCHECK_TEST_NONCES: every nonce this
// process seals under, written at MPI_Finalize for the test to compare.
func logNonce(n []byte) {
	enc.nonceMu.Lock()
	if len(enc.nonceLog)+len(n) <= maxNonceLog {
		enc.nonceLog = append(enc.nonceLog, n...)
	}
	enc.nonceMu.Unlock()
}

// mpiWire is a group's frames as MPI messages on our duplicate of its
// communicator.
type mpiWire struct{ comm C.MPI_Comm }

func (w mpiWire) sendrecv(dst int, out []byte, src int, in []byte, tag int) (int, error) {
	var n C.int
	rc := C.sc_enc_sendrecv(ptr(out), C.int(len(out)), C.int(dst), ptr(in), C.int(len(in)), C.int(src), C.int(tag), w.comm, &n)
	return int(n), mpiErr("MPI_Sendrecv", rc)
}

func (w mpiWire) send(dst int, out []byte, tag int) error {
	return mpiErr("MPI_Send", C.sc_enc_send(ptr(out), C.int(len(out)), C.int(dst), C.int(tag), w.comm))
}

func (w mpiWire) recv(src int, in []byte, tag int) (int, error) {
	var n C.int
	rc := C.sc_enc_recv(ptr(in), C.int(len(in)), C.int(src), C.int(tag), w.comm, &n)
	return int(n), mpiErr("MPI_Recv", rc)
}

// mpiNodeMem is a node's shared memory: an MPI shared-memory window on
// the communicator of the node's ranks, made larger (never smaller) as
// all-gathers need, and freed with the group.
type mpiNodeMem struct {
	comm C.MPI_Comm
	win  C.MPI_Win
	base unsafe.Pointer
	size int
	has  bool
}

func (n *mpiNodeMem) mem(size int) ([]byte, error) {
	if n.has && n.size >= size {
		return unsafe.Slice((*byte)(n.base), n.size), nil
	}
	grown := max(size, 2*n.size)
	if n.has {
		// Every rank of the node is here, done with the old memory.
		if err := n.barrier(); err != nil {
			return nil, err
		}
		n.free()
	}
	// The window comes zeroed: its counters start from nothing (hsState).
	if err := mpiErr("MPI_Win_allocate_shared", C.sc_enc_win_alloc(n.comm, C.size_t(grown), &n.base, &n.win)); err != nil {
		return nil, err
	}
	n.size, n.has = grown, true
	return unsafe.Slice((*byte)(n.base), n.size), nil
}

// yield gives the core away: the ranks of a node may outnumber its
// cores, and the rank waited for may need this one's.
func (n *mpiNodeMem) yield() error {
	C.sched_yield()
	return nil
}

func (n *mpiNodeMem) barrier() error {
	has := C.int(0)
	if n.has {
		has = 1
	}
	return mpiErr("MPI_Barrier", C.sc_enc_node_barrier(n.comm, n.win, has))
}

func (n *mpiNodeMem) free() {
	if n.has {
		C.sc_enc_win_free(&n.win)
		n.has, n.base, n.size = false, nil, 0
	}
}

// encSummary is the summary's encryption part, nil when it is off.
func encSummary() *ranksum.Encryption {
	if !enc.cfg.on || enc.nodes == nil {
		return nil
	}
	e := &ranksum.Encryption{Keys: "X25519 per job, rank 0's job key to each rank, HKDF with " + secretEnv,
		Simulated: enc.cfg.nodes > 0, Algorithm: enc.cfg.alg.String(), Allgathers: map[string]uint64{}, Clear: map[string]uint64{},
		Packed: enc.packed.Load(), Sealed: enc.stats.sealed.Load(), SealedB: enc.stats.sealedBytes.Load(),
		Opened: enc.stats.opened.Load(), OpenedB: enc.stats.openedBytes.Load(), Tampered: enc.stats.tampered.Load(),
		OneNode: uint64(C.sc_enc_count.ag_onenode)}
	if enc.cfg.secret == nil {
		e.Keys = "X25519 per job, rank 0's job key to each rank, no " + secretEnv + ": open to an active attacker at MPI_Init"
	}
	for _, n := range enc.nodes {
		e.Nodes = max(e.Nodes, n+1)
	}
	for a := range enc.stats.byAlg {
		if n := enc.stats.byAlg[a].Load(); n > 0 {
			e.Allgathers[encrypt.Algorithm(a).Title()] = n
		}
	}
	enc.autoMu.Lock()
	for a, r := range enc.autoSizes {
		if r[1] == 0 {
			continue
		}
		if e.AutoSizes == nil {
			e.AutoSizes = map[string][2]int64{}
		}
		e.AutoSizes[encrypt.Algorithm(a).Title()] = r
	}
	enc.autoMu.Unlock()
	for i, name := range callNames {
		if n := uint64(C.sc_enc_count.clear[i]); n > 0 {
			e.Clear[name+": not encrypted"] = n
		}
	}
	if n := uint64(C.sc_enc_count.ag_large); n > 0 {
		e.Clear["allgather: over 1 GiB in all"] = n
	}
	if n := uint64(C.sc_enc_count.ag_foreign); n > 0 {
		e.Clear["allgather: an intercommunicator, or ranks outside MPI_COMM_WORLD"] = n
	}
	return e
}
