package fuzz

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/tcp"
	"github.com/sigcheck/sigcheck/internal/wire"
)

func frame(h wire.Header, payload []byte) []byte {
	h.Plen = len(payload)
	b := make([]byte, wire.HeaderSize)
	h.Put(b)
	return append(b, payload...)
}

// frameSeeds are well-formed frame streams: one message, one cut in two
// frames, an empty one.
func frameSeeds() [][]byte {
	msg := frame(wire.Header{Kind: wire.KindMsg, Tag: 3, ID: 1, Total: 5}, []byte("hello"))
	two := append(frame(wire.Header{Kind: wire.KindMsg, Tag: 4, ID: 2, Total: 6}, []byte("abc")),
		frame(wire.Header{Kind: wire.KindData, Tag: 4, ID: 2, Offset: 3, Total: 6}, []byte("def"))...)
	empty := frame(wire.Header{Kind: wire.KindMsg, ID: 3}, nil)
	return [][]byte{msg, two, empty, append(append(msg, two...), empty...)}
}

// fixChecks gives every header in a stream of frames its right header
// check, so that the fuzzer explores past it (a wrong one is refused
// first thing, which a test below checks once).
func fixChecks(b []byte) []byte {
	b = bytes.Clone(b)
	for off := 0; off+wire.HeaderSize <= len(b); {
		binary.LittleEndian.PutUint64(b[off+56:], xxh3.Hash(b[off:off+56]))
		off += wire.HeaderSize + int(binary.LittleEndian.Uint32(b[off+4:]))
	}
	return b
}

// FuzzFrameHeader: a header decodes only if it is canonical (it encodes
// back to the same bytes) and consistent.
func FuzzFrameHeader(f *testing.F) {
	for _, s := range frameSeeds() {
		f.Add(s[:wire.HeaderSize])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= wire.HeaderSize && len(b)%2 == 0 {
			b = fixChecks(b) // half the inputs: a right header check
		}
		h, err := wire.ParseHeader(b)
		if err != nil {
			if !errors.Is(err, wire.ErrProtocol) {
				t.Fatalf("error %v does not wrap ErrProtocol", err)
			}
			return
		}
		again := make([]byte, wire.HeaderSize)
		h.Put(again)
		if !bytes.Equal(again, b[:wire.HeaderSize]) {
			t.Fatalf("header %x re-encodes as %x", b[:wire.HeaderSize], again)
		}
		if h.Plen > wire.MaxFrame || h.Total < 0 || h.Total > wire.MaxMessage || h.Tag < 0 {
			t.Fatalf("inconsistent header accepted: %+v", h)
		}
		// Offset is a byte offset only in the frames that carry a message's
		// bytes; control frames give it other meanings (a parity index, a
		// direction), which the engine checks against its own state.
		switch h.Kind {
		case wire.KindMsg, wire.KindData, wire.KindRepair:
			if h.Offset < 0 || h.Offset+int64(h.Plen) > h.Total || h.Kind != wire.KindMsg && h.Plen == 0 {
				t.Fatalf("inconsistent data frame accepted: %+v", h)
			}
		case wire.KindParity:
			if h.Offset < 0 {
				t.Fatalf("negative parity index accepted: %+v", h)
			}
		}
	})
}

// rw is a connection made of a script to read and a sink to write.
type rw struct {
	io.Reader
	io.Writer
}

// FuzzHandshake: whatever a stranger sends, neither side of the handshake
// authenticates it (the MACs cover fresh nonces), panics or hangs; the
// bootstrap decoders take any bytes. (Seeds of both versions: a version
// 1 peer is refused by name.)
func FuzzHandshake(f *testing.F) {
	key := wire.JobKey([]byte("secret"))
	f.Add([]byte("SIGCHKv2\x01\x00\x00\x00\x02\x00\x00\x00\x03" + string(make([]byte, 64))))
	f.Add([]byte("SIGCHKv2\x00\x00\x00\x00" + string(make([]byte, 32+34))))
	f.Add([]byte("SIGCHKv1\x01\x00\x00\x00\x02\x00\x00\x00" + string(make([]byte, 64))))
	f.Add([]byte("SIGCHKv1\x00\x00\x00\x00" + string(make([]byte, 32+33))))
	f.Add(wire.EncodeTable([]string{"127.0.0.1:1", "127.0.0.1:2"}))
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := wire.ServerHandshake(rw{bytes.NewReader(b), io.Discard}, key, 0, 2, 0); err == nil {
			t.Fatal("the server side authenticated a scripted client")
		}
		if _, err := wire.ClientHandshake(rw{bytes.NewReader(b), io.Discard}, key, 1, 2, -1, wire.OptAuth); err == nil {
			t.Fatal("the client side authenticated a scripted server")
		}
		if len(b) > 0 {
			wire.ReadTable(bytes.NewReader(b[1:]), int(b[0])%8+1)
			wire.ReadAddr(bytes.NewReader(b))
		}
	})
}

// FuzzFrameStream: an authenticated peer (the fuzzer knows the secret)
// sends arbitrary bytes as frames to a real rank. The rank delivers what
// is well formed, drops the link at the first malformed frame, and never
// panics, hangs or allocates what a header claims. The link's frames are
// not tagged (both ends say Auth off): tagged, every input would fail
// its first header's tag, which channel/tcp's tests check.
func FuzzFrameStream(f *testing.F) {
	for _, s := range frameSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		secret := []byte("fuzz")
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Skip(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		type result struct {
			ep  *channel.Endpoint
			err error
		}
		ch := make(chan result, 1)
		go func() {
			ep, err := tcp.Connect(ctx, tcp.Config{Rank: 0, Size: 2, Listener: ln, Secret: secret, Auth: tcp.AuthOff})
			ch <- result{ep, err}
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := wire.ClientHandshake(c, wire.JobKey(secret), 1, 2, 0, wire.OptAuthSaid); err != nil {
			t.Fatal(err)
		}
		c.Write(wire.EncodeAddr("127.0.0.1:9"))
		if _, err := wire.ReadTable(c, 2); err != nil {
			t.Fatal(err)
		}
		res := <-ch
		if res.err != nil {
			t.Fatal(res.err)
		}
		defer res.ep.Close()
		c.Write(fixChecks(b))
		c.Close()
		buf := make([]byte, 1<<20)
		for {
			rctx, rcancel := context.WithTimeout(ctx, 200*time.Millisecond)
			_, err := res.ep.Recv(rctx, channel.AnySource, channel.AnyTag, buf)
			rcancel()
			if err != nil && !errors.Is(err, channel.ErrTruncated) {
				if !errors.Is(err, channel.ErrPeerLost) && !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
		}
	})
}
