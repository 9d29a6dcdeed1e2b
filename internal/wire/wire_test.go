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
			r, err := ServerHandshake(s, c.serverKey, 0, 3, OptAuth)
			if err != nil {
				s.Close()
			}
			sr <- res{r, err}
		}()
		r, err := ClientHandshake(cl, c.clientKy, c.clientRank, 3, c.want, OptAuthSaid)
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
			if r.Opts != OptAuth || got.peer.Opts != OptAuthSaid {
				t.Errorf("%s: options: the client got the server's %#x, the server the client's %#x", c.name, r.Opts, got.peer.Opts)
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

// flipConn passes what it is given, flipping byte at (counted from the
// first byte written through it) on the way.
type flipConn struct {
	net.Conn
	at, n int
}

func (c *flipConn) Write(b []byte) (int, error) {
	if c.at >= c.n && c.at < c.n+len(b) {
		b = bytes.Clone(b)
		b[c.at-c.n] ^= 1
	}
	c.n += len(b)
	return c.Conn.Write(b)
}

// TestHandshakeOptions: what each end states reaches the other, and a
// relay that changes a bit of either end's options (or anything else in
// join or accept) fails the handshake on both sides; a peer of the first
// version is refused by name.
func TestHandshakeOptions(t *testing.T) {
	key := JobKey([]byte("job"))
	shake := func(serverFlip, clientFlip int) (Peer, Peer, error, error) {
		s, cl := net.Pipe()
		defer s.Close()
		defer cl.Close()
		type res struct {
			p   Peer
			err error
		}
		sr := make(chan res, 1)
		go func() {
			p, err := ServerHandshake(&flipConn{Conn: s, at: serverFlip}, key, 0, 2, OptAuth|OptAuthSaid)
			if err != nil {
				s.Close()
			}
			sr <- res{p, err}
		}()
		p, err := ClientHandshake(&flipConn{Conn: cl, at: clientFlip}, key, 1, 2, 0, OptAuthSaid)
		if err != nil {
			cl.Close()
		}
		got := <-sr
		return got.p, p, got.err, err
	}
	fromClient, fromServer, serr, cerr := shake(-1, -1)
	if serr != nil || cerr != nil || fromClient.Opts != OptAuthSaid || fromServer.Opts != OptAuth|OptAuthSaid {
		t.Fatalf("the client stated %#x, the server got %#x (%v); the server stated %#x, the client got %#x (%v)",
			OptAuthSaid, fromClient.Opts, serr, OptAuth|OptAuthSaid, fromServer.Opts, cerr)
	}
	// Byte 16 of join is the client's options, byte 1 of accept (after
	// the 44 bytes of hello) the server's.
	for _, c := range []struct {
		name                   string
		serverFlip, clientFlip int
	}{
		{"the client's options", -1, 16},
		{"the server's options", HelloSize + 1, -1},
		{"the client's nonce", -1, 20},
		{"the server's MAC", HelloSize + 5, -1},
	} {
		if _, _, serr, cerr := shake(c.serverFlip, c.clientFlip); cerr == nil {
			t.Errorf("%s changed on the way: the client authenticated the server (server: %v)", c.name, serr)
		}
	}
	v1 := append([]byte("SIGCHKv1"), make([]byte, HelloSize-8)...)
	if _, err := ParseHello(v1); !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), `version "v1"`) {
		t.Errorf("a hello of version 1: %v", err)
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
		go ServerHandshake(s, key, 0, 2, 0)
		p, err := ClientHandshake(cl, key, 1, 2, 0, 0)
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
