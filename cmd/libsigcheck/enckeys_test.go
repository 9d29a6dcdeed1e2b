package main

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sigcheck/sigcheck/channel/encrypt"
)

func TestEncConfig(t *testing.T) {
	secret := strings.Repeat("ab", 32)
	for _, c := range []struct {
		env  map[string]string
		want string // an error's text, or "" for none
	}{
		{nil, ""},
		{map[string]string{"SIGCHECK_ENCRYPT": "1", "SIGCHECK_ENCRYPT_ALG": "HS2", "SIGCHECK_NODES": "2:cyclic", secretEnv: secret}, ""},
		{map[string]string{"SIGCHECK_ENCRYPT": "yes"}, `SIGCHECK_ENCRYPT="yes": want 1`},
		{map[string]string{"SIGCHECK_NODES": "2"}, "SIGCHECK_NODES is set, but only SIGCHECK_ENCRYPT=1 uses it"},
		{map[string]string{"SIGCHECK_ENCRYPT": "1", "SIGCHECK_ENCRYPT_ALG": "fast"}, `SIGCHECK_ENCRYPT_ALG="fast": unknown algorithm`},
		{map[string]string{"SIGCHECK_ENCRYPT": "1", "SIGCHECK_NODES": "0"}, "want a number of nodes from 1"},
		{map[string]string{"SIGCHECK_ENCRYPT": "1", "SIGCHECK_NODES": "99999999999"}, "want a number of nodes from 1"},
		{map[string]string{"SIGCHECK_ENCRYPT": "1", "SIGCHECK_NODES": "2:round"}, `"round": want block or cyclic`},
		{map[string]string{"SIGCHECK_ENCRYPT": "1", secretEnv: "abcd"}, "want 16 to 64 bytes in hex"},
		{map[string]string{"SIGCHECK_ENCRYPT": "1", secretEnv: strings.Repeat("zz", 20)}, "want 16 to 64 bytes in hex"},
		{map[string]string{"SIGCHECK_ENCRYPT": "1", "SIGCHECK_TEST_TAMPER": "0"}, "want the number (from 1)"},
	} {
		cfg, err := parseEncConfig(func(k string) string { return c.env[k] })
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.env, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want %q", c.env, err, c.want)
		}
		if c.want == "" && c.env[secretEnv] != "" && (!cfg.on || cfg.alg != encrypt.HS2 || cfg.nodes != 2 || cfg.mapping != encrypt.Cyclic || len(cfg.secret) != 32) {
			t.Errorf("%v: %+v", c.env, cfg)
		}
	}
}

func TestWorldNodes(t *testing.T) {
	real := []int{0, 0, 0, 0, 4, 4, 4, 4} // two machines of four ranks
	for _, c := range []struct {
		nodes int
		m     encrypt.Mapping
		want  []int
	}{
		{0, encrypt.Block, []int{0, 0, 0, 0, 1, 1, 1, 1}},
		{2, encrypt.Block, []int{0, 0, 0, 0, 1, 1, 1, 1}},
		{4, encrypt.Block, []int{0, 0, 1, 1, 2, 2, 3, 3}},
		{2, encrypt.Cyclic, []int{0, 1, 0, 1, 2, 3, 2, 3}}, // simulated within real
		{8, encrypt.Block, []int{0, 1, 2, 3, 4, 5, 6, 7}},
	} {
		got, err := worldNodes(real, c.nodes, c.m)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("SIGCHECK_NODES=%d:%v: %v, %v; want %v", c.nodes, c.m, got, err, c.want)
		}
	}
	if _, err := worldNodes(real, 9, encrypt.Block); err == nil {
		t.Error("9 nodes of 8 ranks: no error")
	}
	// A communicator of world ranks 7, 1, 6: nodes numbered by first member.
	world, _ := worldNodes(real, 0, encrypt.Block)
	lay, err := commLayout(world, []int{7, 1, 6})
	if err != nil || lay.Nodes() != 2 || lay.Node(0) != 0 || lay.Node(1) != 1 || lay.Node(2) != 0 {
		t.Errorf("commLayout: %v, %v", lay, err)
	}
	if _, err := commLayout(world, []int{7, -1}); err == nil {
		t.Error("a member outside the world: no error")
	}
}

// The key agreement: every rank opens rank 0's job key, unless its secret
// differs or a public key was replaced on the way.
func TestKeyAgreement(t *testing.T) {
	const p = 4
	secret := bytes.Repeat([]byte{7}, 32)
	parties := make([]*keyParty, p)
	var pubs []byte
	for r := range parties {
		k, err := newKeyParty()
		if err != nil {
			t.Fatal(err)
		}
		parties[r] = k
		pubs = append(pubs, k.public()...)
	}
	tr := keyTranscript(pubs)
	job := bytes.Repeat([]byte{9}, encrypt.KeyLen)
	pub := func(r int) []byte { return pubs[r*x25519PublicLen : (r+1)*x25519PublicLen] }
	for r := 1; r < p; r++ {
		w, err := parties[0].wrapAEAD(pub(r), secret, tr, r)
		if err != nil {
			t.Fatal(err)
		}
		msg := sealJobKey(w, job, r, tr)
		mine, err := parties[r].wrapAEAD(pub(0), secret, tr, r)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := openJobKey(mine, msg, r, tr); err != nil || !bytes.Equal(got, job) {
			t.Errorf("rank %d: %x, %v", r, got, err)
		}
		other, _ := parties[r].wrapAEAD(pub(0), bytes.Repeat([]byte{8}, 32), tr, r)
		if _, err := openJobKey(other, msg, r, tr); !errors.Is(err, errKeyAgreement) {
			t.Errorf("rank %d with another secret: %v", r, err)
		}
		if _, err := openJobKey(mine, msg, r, keyTranscript(append(slices.Clone(pubs[:32]), pubs...))); !errors.Is(err, errKeyAgreement) {
			t.Errorf("rank %d with another transcript: %v", r, err)
		}
		if _, err := openJobKey(mine, msg[:5], r, tr); !errors.Is(err, errKeyAgreement) {
			t.Errorf("rank %d, a short message: %v", r, err)
		}
	}
	if _, err := parties[0].wrapAEAD(make([]byte, 32), secret, tr, 1); err == nil {
		t.Error("a low-order public key: no error")
	}
	a, _ := commKey(job, []byte("salt"), []int{0, 1})
	b, _ := commKey(job, []byte("salt"), []int{1, 0})
	c, _ := commKey(job, []byte("tlas"), []int{0, 1})
	if bytes.Equal(a, b) || bytes.Equal(a, c) || len(a) != encrypt.KeyLen {
		t.Errorf("commKey: %x %x %x", a, b, c)
	}
}
