package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
)

func TestHandshake(t *testing.T) {
	for _, c := range []struct {
		name                string
		serverKey, clientKy []byte
		clientRank, want    int
		ok                  bool
	}{
		{"same secret", JobKey([]byte("a")), JobKey([]byte("a")), 2, 0, true},
		{"another job", JobKey([]byte("a")), JobKey([]byte("b")), 2, 0, false},
		{"wrong server rank", JobKey([]byte("a")), JobKey([]byte("a")), 2, 1, false},
		{"claims the server's rank", JobKey([]byte("a")), JobKey([]byte("a")), 0, -1, false},
	} {
		s, cl := net.Pipe()
		type res struct {
			peer Peer
			err  error
		}
		sr := make(chan res, 1)
		go func() {
			r, err := ServerHandshake(s, c.serverKey, 0, 3)
			if err != nil {
				s.Close()
			}
			sr <- res{r, err}
		}()
		r, err := ClientHandshake(cl, c.clientKy, c.clientRank, 3, c.want)
		if err != nil {
			cl.Close()
		}
		got := <-sr
		if c.ok {
			if err != nil || got.err != nil || r.Rank != 0 || got.peer.Rank != c.clientRank {
				t.Errorf("%s: client %d %v, server %d %v", c.name, r.Rank, err, got.peer.Rank, got.err)
			}
			if len(r.Link) != 32 || !bytes.Equal(r.Link, got.peer.Link) {
				t.Errorf("%s: link secrets differ: %x, %x", c.name, r.Link, got.peer.Link)
			}
		} else if err == nil {
			t.Errorf("%s: the client authenticated", c.name)
		} else if !errors.Is(err, ErrUnauthenticated) && !strings.Contains(err.Error(), "closed") {
			t.Errorf("%s: %v", c.name, err)
		}
		s.Close()
		cl.Close()
	}
}

func TestHeaderChecks(t *testing.T) {
	good := Header{Kind: KindData, Plen: 10, Tag: 1, ID: 1, Offset: 5, Total: 20}
	b := make([]byte, HeaderSize)
	good.Put(b)
	if h, err := ParseHeader(b); err != nil || h != good {
		t.Fatalf("%+v %v", h, err)
	}
	for name, edit := range map[string]func(h *Header){
		"kind 0":          func(h *Header) { h.Kind = 0 },
		"kind 12":         func(h *Header) { h.Kind = 12 },
		"payload too big": func(h *Header) { h.Plen = MaxFrame + 1 },
		"past the end":    func(h *Header) { h.Offset = 15 },
		"negative tag":    func(h *Header) { h.Tag = -2 },
		"too long":        func(h *Header) { h.Total = MaxMessage + 1 },
		"negative total":  func(h *Header) { h.Total = -1 },
		"empty data":      func(h *Header) { h.Plen = 0 },
		"msg not at 0":    func(h *Header) { h.Kind = KindMsg },
	} {
		h := good
		edit(&h)
		h.Put(b)
		if _, err := ParseHeader(b); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v", name, err)
		}
	}
	good.Put(b)
	b[20] ^= 1
	if _, err := ParseHeader(b); !errors.Is(err, ErrProtocol) {
		t.Error("a corrupted header accepted")
	}
	if _, err := ParseHeader(b[:10]); err == nil {
		t.Error("a short header accepted")
	}

	// A frame of version 1 (bytes 12–15 reserved, before Seq), with a
	// header check of its own, is refused by name.
	good.Put(b)
	b[0] = 1
	binary.LittleEndian.PutUint64(b[56:], xxh3.Hash(b[:56]))
	if _, err := ParseHeader(b); !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "version 1, this build speaks 2") {
		t.Errorf("a version 1 header: %v", err)
	}
}

func TestBootstrapCodec(t *testing.T) {
	addrs := []string{"10.0.0.1:5000", "[::1]:7", ""}
	got, err := ReadTable(bytes.NewReader(EncodeTable(addrs)), 3)
	if err != nil || strings.Join(got, ",") != strings.Join(addrs, ",") {
		t.Errorf("%q %v", got, err)
	}
	if _, err := ReadTable(bytes.NewReader(EncodeTable(addrs)), 4); !errors.Is(err, ErrProtocol) {
		t.Errorf("a table for another size: %v", err)
	}
}

// TestLinkSecretsDiffer: two handshakes between the same ranks of the
// same job give different link secrets (fresh nonces), and keys expanded
// under different labels differ.
func TestLinkSecretsDiffer(t *testing.T) {
	key := JobKey([]byte("job"))
	shake := func() []byte {
		s, cl := net.Pipe()
		defer s.Close()
		defer cl.Close()
		go ServerHandshake(s, key, 0, 2)
		p, err := ClientHandshake(cl, key, 1, 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		return p.Link
	}
	a, b := shake(), shake()
	if bytes.Equal(a, b) {
		t.Fatal("two handshakes gave the same link secret")
	}
	k1, err1 := LinkKey(a, "gcm", 32)
	k2, err2 := LinkKey(a, "other", 32)
	if err1 != nil || err2 != nil || bytes.Equal(k1, k2) || len(k1) != 32 {
		t.Fatalf("labels: %x %v, %x %v", k1, err1, k2, err2)
	}
}
