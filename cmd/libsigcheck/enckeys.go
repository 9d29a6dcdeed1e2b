package main

// SIGCHECK_ENCRYPT's settings, nodes and keys: what the library decides
// and derives at MPI_Init and when a communicator first all-gathers,
// kept apart from the MPI calls (crypt.go) so that it is tested without
// MPI.

import (
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sigcheck/sigcheck/channel/encrypt"
)

// encConfig is what the environment asks of encryption.
type encConfig struct {
	on      bool
	alg     encrypt.Algorithm // Auto unless SIGCHECK_ENCRYPT_ALG names one
	nodes   int               // SIGCHECK_NODES: simulated nodes, 0 for none
	mapping encrypt.Mapping   // how SIGCHECK_NODES deals ranks out
	secret  []byte            // SIGCHECK_ENCRYPT_SECRET, nil if not given
	tamper  uint64            // SIGCHECK_TEST_TAMPER: the frame to alter (testHookTamper)
	nonces  string            // SIGCHECK_TEST_NONCES: where to list the nonces (testHookNonce)
}

// Bounds of the settings.
const (
	maxSimNodes     = 1 << 20
	minSecretBytes  = 16
	maxSecretBytes  = 64
	secretEnv       = "SIGCHECK_ENCRYPT_SECRET"
	algHintKey      = "sigcheck_encrypt_alg" // an MPI_Info hint on a communicator
	labelWrap       = "sigcheck/libsigcheck/v1 wrap"
	labelComm       = "sigcheck/libsigcheck/v1 comm"
	labelSetup      = "sigcheck/libsigcheck/v1 setup"
	commSaltLen     = 16
	x25519PublicLen = 32
)

func parseEncConfig(getenv func(string) string) (encConfig, error) {
	var c encConfig
	switch v := getenv("SIGCHECK_ENCRYPT"); v {
	case "", "0":
	case "1":
		c.on = true
	default:
		return c, fmt.Errorf("SIGCHECK_ENCRYPT=%q: want 1 (or 0, or unset)", v)
	}
	needOn := func(name string) error {
		if !c.on {
			return fmt.Errorf("%s is set, but only SIGCHECK_ENCRYPT=1 uses it", name)
		}
		return nil
	}
	if v := getenv("SIGCHECK_ENCRYPT_ALG"); v != "" {
		if err := needOn("SIGCHECK_ENCRYPT_ALG"); err != nil {
			return c, err
		}
		a, err := encrypt.ParseAlgorithm(v)
		if err != nil {
			return c, fmt.Errorf("SIGCHECK_ENCRYPT_ALG=%q: %v", v, strings.TrimPrefix(err.Error(), "encrypt: "))
		}
		c.alg = a
	}
	if v := getenv("SIGCHECK_NODES"); v != "" {
		if err := needOn("SIGCHECK_NODES"); err != nil {
			return c, err
		}
		n, m, err := parseNodes(v)
		if err != nil {
			return c, err
		}
		c.nodes, c.mapping = n, m
	}
	if v := getenv(secretEnv); v != "" {
		b, err := hex.DecodeString(v)
		if err != nil || len(b) < minSecretBytes || len(b) > maxSecretBytes {
			return c, fmt.Errorf("%s: want %d to %d bytes in hex (sigcheck mpirun -encrypt draws one)", secretEnv, minSecretBytes, maxSecretBytes)
		}
		c.secret = b
	}
	if v := getenv("SIGCHECK_TEST_TAMPER"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 {
			return c, fmt.Errorf("SIGCHECK_TEST_TAMPER=%q: want the number (from 1) of the frame from another node to alter", v)
		}
		c.tamper = n
	}
	c.nonces = getenv("SIGCHECK_TEST_NONCES")
	return c, nil
}

// parseNodes reads SIGCHECK_NODES: N, or N:block, or N:cyclic.
func parseNodes(v string) (int, encrypt.Mapping, error) {
	ns, ms, hasMap := strings.Cut(v, ":")
	n, err := strconv.Atoi(ns)
	if err != nil || n < 1 || n > maxSimNodes {
		return 0, 0, fmt.Errorf("SIGCHECK_NODES=%q: want a number of nodes from 1 to %d, then :block (the default) or :cyclic", v, maxSimNodes)
	}
	m := encrypt.Block
	if hasMap {
		if m, err = encrypt.ParseMapping(ms); err != nil {
			return 0, 0, fmt.Errorf("SIGCHECK_NODES=%q: %q: want block or cyclic", v, ms)
		}
	}
	return n, m, nil
}

// worldNodes numbers the node of every rank of MPI_COMM_WORLD from 0, in
// the order of their first ranks: ranks are on one node when they share a
// machine (real[w] names rank w's machine, as MPI_Comm_split_type with
// MPI_COMM_TYPE_SHARED groups them) and, with SIGCHECK_NODES, the same
// simulated node.
func worldNodes(real []int, nodes int, m encrypt.Mapping) ([]int, error) {
	p := len(real)
	sim := make([]int, p)
	if nodes > 0 {
		if nodes > p {
			return nil, fmt.Errorf("SIGCHECK_NODES=%d: more nodes than the job's %d ranks", nodes, p)
		}
		lay, err := encrypt.NewLayout(p, nodes, m)
		if err != nil {
			return nil, err
		}
		for w := range sim {
			sim[w] = lay.Node(w)
		}
	}
	ids := map[[2]int]int{}
	out := make([]int, p)
	for w := range out {
		k := [2]int{real[w], sim[w]}
		id, ok := ids[k]
		if !ok {
			id = len(ids)
			ids[k] = id
		}
		out[w] = id
	}
	return out, nil
}

// commLayout is the layout of a communicator whose rank i is world rank
// members[i]: its nodes are those of world, numbered in the order of
// their first member.
func commLayout(world []int, members []int) (encrypt.Layout, error) {
	ids := map[int]int{}
	nodeOf := make([]int, len(members))
	for i, w := range members {
		if w < 0 || w >= len(world) {
			return encrypt.Layout{}, fmt.Errorf("rank %d of the communicator is not in MPI_COMM_WORLD", i)
		}
		id, ok := ids[world[w]]
		if !ok {
			id = len(ids)
			ids[world[w]] = id
		}
		nodeOf[i] = id
	}
	return encrypt.LayoutOf(nodeOf)
}

// Keys. At MPI_Init every rank draws an X25519 key pair and the ranks
// all-gather their public keys in the clear. Rank 0 draws the job key
// and sends it to each rank r sealed under a wrap key that only rank 0
// and r can derive: HKDF of their X25519 shared secret, salted with the
// job's secret from the launcher's environment (when given), bound to the
// transcript of every public key and to r. Each communicator's key is
// then derived from the job key and a salt that the communicator's rank 0
// draws, bound to its members (commKey).

// keyParty is one rank's X25519 key pair.
type keyParty struct{ priv *ecdh.PrivateKey }

func newKeyParty() (*keyParty, error) {
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return &keyParty{priv: k}, nil
}

func (k *keyParty) public() []byte { return k.priv.PublicKey().Bytes() }

// keyTranscript binds the wrap keys to every rank's public key, so that a
// key swapped on the way to some ranks makes them derive other keys.
func keyTranscript(pubs []byte) []byte {
	h := sha256.New()
	h.Write([]byte(labelSetup))
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(pubs)/x25519PublicLen))
	h.Write(n[:])
	h.Write(pubs)
	return h.Sum(nil)
}

// wrapAEAD is the key rank 0 seals rank r's copy of the job key under:
// this party and peer's shared secret, the job's secret and the
// transcript, through HKDF.
func (k *keyParty) wrapAEAD(peer []byte, secret, transcript []byte, r int) (cipher.AEAD, error) {
	pub, err := ecdh.X25519().NewPublicKey(peer)
	if err != nil {
		return nil, fmt.Errorf("rank %d's public key: %v", r, err)
	}
	ss, err := k.priv.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("the shared secret with rank %d: %v", r, err)
	}
	key, err := encrypt.DeriveKey(ss, secret, fmt.Sprintf("%s %x rank %d", labelWrap, transcript, r))
	if err != nil {
		return nil, err
	}
	return encrypt.NewAEAD(key)
}

// wrappedLen is the length of a wrapped job key.
const wrappedLen = encrypt.KeyLen + encrypt.TagLen

func setupAAD(r int, transcript []byte) []byte {
	return binary.LittleEndian.AppendUint32(append([]byte(labelSetup), transcript...), uint32(r))
}

// Each wrap key seals once (one job key, to one rank), so its nonce may
// be fixed.
var zeroNonce [12]byte

func sealJobKey(w cipher.AEAD, job []byte, r int, transcript []byte) []byte {
	return w.Seal(nil, zeroNonce[:], job, setupAAD(r, transcript))
}

// errKeyAgreement: rank 0's job key did not open under this rank's wrap
// key: another secret, or a public key replaced on the way.
var errKeyAgreement = errors.New("the job key from rank 0 did not open: the ranks have different " + secretEnv +
	", or a public key was replaced on the way")

func openJobKey(w cipher.AEAD, msg []byte, r int, transcript []byte) ([]byte, error) {
	if len(msg) != wrappedLen {
		return nil, errKeyAgreement
	}
	k, err := w.Open(nil, zeroNonce[:], msg, setupAAD(r, transcript))
	if err != nil {
		return nil, errKeyAgreement
	}
	return k, nil
}

// commKey derives a communicator's key from the job key, the salt its
// rank 0 drew, and its members (world ranks, in its rank order).
func commKey(job, salt []byte, members []int) ([]byte, error) {
	h := sha256.New()
	for _, w := range members {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(w))
		h.Write(b[:])
	}
	return encrypt.DeriveKey(job, salt, fmt.Sprintf("%s %x", labelComm, h.Sum(nil)))
}
