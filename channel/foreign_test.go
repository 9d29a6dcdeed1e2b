package channel_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/channeltest"
	"github.com/sigcheck/sigcheck/sig"
)

// foreign is a Comm of another package, as a user's wrapper or a
// replicate.Comm is: it has the four methods of a Comm and nothing of
// channel's own, and forwards them to a Comm of channel. damage, if set,
// flips a bit of the next message it sends. sys, if set, carries the
// reserved tags (of the collectives), shifted down, as replicate.Comm
// does: a Comm of channel refuses them from a user.
type foreign struct {
	c      channel.Comm
	sys    channel.Comm
	damage atomic.Bool
}

func (f *foreign) under(tag int) (channel.Comm, int) {
	if f.sys != nil && tag >= channel.ReservedTag {
		return f.sys, tag - channel.ReservedTag
	}
	return f.c, tag
}

func (f *foreign) Rank() int { return f.c.Rank() }
func (f *foreign) Size() int { return f.c.Size() }

func (f *foreign) Send(ctx context.Context, dst, tag int, data []byte) error {
	if len(data) > 0 && f.damage.CompareAndSwap(true, false) {
		data = bytes.Clone(data)
		data[len(data)/2] ^= 0x10
	}
	c, tag := f.under(tag)
	return c.Send(ctx, dst, tag, data)
}

func (f *foreign) Recv(ctx context.Context, src, tag int, buf []byte) (channel.Status, error) {
	c, utag := f.under(tag)
	st, err := c.Recv(ctx, src, utag, buf)
	if c == f.sys {
		st.Tag = tag
	}
	return st, err
}

// foreignDup is a foreign Comm that can duplicate itself, as Dup asks.
type foreignDup struct{ foreign }

func (f *foreignDup) Dup() channel.Comm {
	return &foreign{c: channel.Dup(f.c.(channel.Duplicator))}
}

// foreignFlush is a foreign Comm that says its sends are settled.
type foreignFlush struct {
	foreign
	flushed atomic.Int32
}

func (f *foreignFlush) Flush(ctx context.Context) error {
	f.flushed.Add(1)
	return nil
}

func foreigners(t *testing.T, n int) []*foreign {
	fs := make([]*foreign, n)
	for r, ep := range channeltest.Endpoints(t, "local", n) {
		fs[r] = &foreign{c: ep}
	}
	return fs
}

func mustT(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestProtectionOverForeignComm: WithChecksum and WithMerkle over a Comm
// of another package (which they used to refuse with a panic) protect
// each message whole: every size arrives byte for byte with its length,
// a message longer than the receive is ErrTruncated with its own length,
// and a damaged one fails its receive with ErrCorrupted, counted in the
// layer's Stats, while the messages after it arrive.
func TestProtectionOverForeignComm(t *testing.T) {
	layers := map[string]func(channel.Comm) (channel.Comm, error){
		"checksum": func(c channel.Comm) (channel.Comm, error) { return channel.WithChecksum(c) },
		"merkle":   func(c channel.Comm) (channel.Comm, error) { return channel.WithMerkle(c) },
		"merkle/xxh3-128": func(c channel.Comm) (channel.Comm, error) {
			return channel.WithMerkle(c, channel.TreeHash("xxh3-128"), channel.Segment(512))
		},
		"checksum/crc32c": func(c channel.Comm) (channel.Comm, error) {
			return channel.WithChecksum(c, channel.Algorithm("crc32c"))
		},
	}
	for name, layer := range layers {
		t.Run(name, func(t *testing.T) {
			fs := foreigners(t, 2)
			l0, err := layer(fs[0])
			mustT(t, err)
			l1, err := layer(fs[1])
			mustT(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			sizes := []int{0, 1, 100, 4096, 300 << 10, 2<<20 + 3}
			go func() {
				for i, n := range sizes {
					l0.Send(ctx, 1, i, fpattern(n, byte(i)))
				}
				l0.Send(ctx, 1, 50, fpattern(1000, 1)) // truncated
				fs[0].damage.Store(true)
				l0.Send(ctx, 1, 51, fpattern(5000, 2)) // damaged
				l0.Send(ctx, 1, 52, fpattern(5000, 3))
			}()
			for i, n := range sizes {
				buf := make([]byte, n+7)
				st, err := l1.Recv(ctx, 0, i, buf)
				mustT(t, err)
				if st.Len != n || st.Source != 0 || st.Tag != i || !bytes.Equal(buf[:n], fpattern(n, byte(i))) {
					t.Fatalf("message of %d bytes: status %+v, bytes equal %v", n, st, bytes.Equal(buf[:n], fpattern(n, byte(i))))
				}
				if !bytes.Equal(buf[n:], make([]byte, 7)) {
					t.Fatalf("message of %d bytes: the receive's buffer written past the message", n)
				}
			}
			st, err := l1.Recv(ctx, 0, 50, make([]byte, 999))
			if !errors.Is(err, channel.ErrTruncated) || st.Len != 1000 {
				t.Fatalf("truncated: %+v, %v", st, err)
			}
			if _, err := l1.Recv(ctx, 0, 51, make([]byte, 5000)); !errors.Is(err, channel.ErrCorrupted) {
				t.Fatalf("damaged: %v", err)
			}
			buf := make([]byte, 5000)
			if _, err := l1.Recv(ctx, 0, 52, buf); err != nil || !bytes.Equal(buf, fpattern(5000, 3)) {
				t.Fatalf("after the damaged one: %v", err)
			}
			s, ok := channel.LookupStats(l1)
			if !ok || s.Detected != 1 || s.Unrepaired != 1 || s.MessagesReceived != uint64(len(sizes)+1) {
				t.Fatalf("receiver's stats: %+v (%v)", s, ok)
			}
			if s := channel.StatsOf(l0); s.MessagesSent != uint64(len(sizes)+3) {
				t.Fatalf("sender's stats: %+v", s)
			}
		})
	}
}

// TestCollectivesOverForeignLayer: the collectives run over a protection
// layer on a Comm of another package, as over any Comm.
func TestCollectivesOverForeignLayer(t *testing.T) {
	const p = 3
	ls := make([]channel.Comm, p)
	for r, ep := range channeltest.Endpoints(t, "local", p) {
		var err error
		ls[r], err = channel.WithMerkle(&foreign{c: ep, sys: channel.Dup(ep)})
		mustT(t, err)
	}
	err := channeltest.Run(t, p, 20*time.Second, nil, func(ctx context.Context, r int) error {
		c := ls[r]
		all := make([]byte, p*1000)
		if err := channel.Allgather(ctx, c, fpattern(1000, byte(r)), all); err != nil {
			return err
		}
		for j := range p {
			if !bytes.Equal(all[j*1000:(j+1)*1000], fpattern(1000, byte(j))) {
				return fmt.Errorf("block %d differs", j)
			}
		}
		buf := make([]byte, 3000)
		if r == 1 {
			copy(buf, fpattern(3000, 9))
		}
		if err := channel.Bcast(ctx, c, 1, buf); err != nil {
			return err
		}
		if !bytes.Equal(buf, fpattern(3000, 9)) {
			return errors.New("the broadcast's bytes differ")
		}
		return channel.Barrier(ctx, c)
	})
	mustT(t, err)
}

// TestParityOverForeignComm: nothing rebuilds from parity over a Comm of
// another package, and WithMerkle says so rather than ignore the option.
func TestParityOverForeignComm(t *testing.T) {
	fs := foreigners(t, 1)
	if _, err := channel.WithMerkle(fs[0], channel.Parity(2)); err == nil {
		t.Fatal("WithMerkle with Parity over a foreign Comm: no error")
	}
	if _, err := channel.WithMerkle(fs[0].c, channel.Parity(2)); err != nil {
		t.Fatalf("WithMerkle with Parity over an Endpoint: %v", err)
	}
}

// TestTypedOverForeignComm: WithTypes over a Comm of another package
// (which it used to refuse with a panic), bare or under a protection
// layer, checks datatypes as over an Endpoint: a match delivers the
// bytes, a mismatch is located, an untyped message is refused, and a
// message longer than the receive is ErrTruncated.
func TestTypedOverForeignComm(t *testing.T) {
	send := sig.Must(sig.ParseDatatype("struct([1, 3], [0, 8], [int, double])"))
	same := sig.Must(sig.ParseDatatype("struct([1, 3], [0, 8], [int, double])"))
	wrong := sig.Must(sig.ParseDatatype("struct([1, 6], [0, 8], [int, float])"))
	for _, under := range []string{"bare", "checksum"} {
		t.Run(under, func(t *testing.T) {
			fs := foreigners(t, 2)
			var c0, c1 channel.Comm = fs[0], fs[1]
			if under == "checksum" {
				var err error
				c0, err = channel.WithChecksum(fs[0])
				mustT(t, err)
				c1, err = channel.WithChecksum(fs[1])
				mustT(t, err)
			}
			t0, t1 := channel.WithTypes(c0, nil), channel.WithTypes(c1, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			data := fpattern(int(send.Size())*100, 4)
			go func() {
				t0.Send(ctx, 1, 1, data, send, 100)
				t0.Send(ctx, 1, 2, data, send, 100)
				c0.Send(ctx, 1, 3, data) // untyped
				t0.Send(ctx, 1, 4, data, send, 100)
			}()
			buf := make([]byte, len(data))
			st, err := t1.Recv(ctx, 0, 1, buf, same, 100)
			if err != nil || st.Len != len(data) || !bytes.Equal(buf, data) {
				t.Fatalf("matching types: %+v, %v", st, err)
			}
			var mm *sig.MismatchError
			if _, err := t1.Recv(ctx, 0, 2, buf, wrong, 100); !errors.As(err, &mm) || mm.Index != 1 {
				t.Fatalf("mismatch: %v", err)
			}
			if _, err := t1.Recv(ctx, 0, 3, buf, same, 100); !errors.Is(err, channel.ErrProtocol) {
				t.Fatalf("untyped message: %v", err)
			}
			if _, err := t1.Recv(ctx, 0, 4, buf[:len(buf)/2], same, 50); !errors.Is(err, channel.ErrTruncated) {
				t.Fatalf("truncated: %v", err)
			}
		})
	}
}

// TestDupOfForeignComm: Dup takes a Duplicator, which a Comm of another
// package may be: its duplicate has a matching space of its own. (Dup
// used to take any Comm and panic on one of another package.)
func TestDupOfForeignComm(t *testing.T) {
	eps := channeltest.Endpoints(t, "local", 2)
	f0, f1 := &foreignDup{foreign{c: eps[0]}}, &foreignDup{foreign{c: eps[1]}}
	d0, d1 := channel.Dup(f0), channel.Dup(f1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	mustT(t, d0.Send(ctx, 1, 7, []byte("on the duplicate")))
	mustT(t, f0.Send(ctx, 1, 7, []byte("on the original")))
	buf := make([]byte, 64)
	st, err := f1.Recv(ctx, 0, channel.AnyTag, buf)
	mustT(t, err)
	if got := string(buf[:st.Len]); got != "on the original" {
		t.Fatalf("the original got %q", got)
	}
	st, err = d1.Recv(ctx, 0, 7, buf)
	mustT(t, err)
	if got := string(buf[:st.Len]); got != "on the duplicate" {
		t.Fatalf("the duplicate got %q", got)
	}
	var c channel.Comm = &foreign{c: eps[0]}
	if _, ok := c.(channel.Duplicator); ok {
		t.Fatal("a foreign Comm without Dup is a Duplicator")
	}
	l, err := channel.WithChecksum(c)
	mustT(t, err)
	if _, ok := l.(channel.Duplicator); ok {
		t.Fatal("a layer over a foreign Comm is a Duplicator")
	}
}

// TestFlushAndStatsOfForeignComm: Flush and StatsOf do not silently do
// nothing on a Comm of another package: Flush returns an error wrapping
// errors.ErrUnsupported unless the Comm is a Flusher, and LookupStats
// says that it keeps no counters. A layer over it flushes what it
// flushes, and counts its own messages.
func TestFlushAndStatsOfForeignComm(t *testing.T) {
	eps := channeltest.Endpoints(t, "local", 2)
	ctx := context.Background()
	f := &foreign{c: eps[0]}
	if err := channel.Flush(ctx, f); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Flush of a foreign Comm: %v", err)
	}
	l, err := channel.WithChecksum(f)
	mustT(t, err)
	if err := channel.Flush(ctx, l); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Flush of a layer over a foreign Comm: %v", err)
	}
	ff := &foreignFlush{foreign: foreign{c: eps[0]}}
	l, err = channel.WithChecksum(ff)
	mustT(t, err)
	if err := channel.Flush(ctx, l); err != nil || ff.flushed.Load() != 1 {
		t.Fatalf("Flush of a layer over a Flusher: %v, %d calls", err, ff.flushed.Load())
	}
	if s, ok := channel.LookupStats(f); ok || s != (channel.Stats{}) {
		t.Fatalf("LookupStats of a foreign Comm: %+v, %v", s, ok)
	}
	if s := channel.StatsOf(f); s != (channel.Stats{}) {
		t.Fatalf("StatsOf of a foreign Comm: %+v", s)
	}
	for _, c := range []channel.Comm{eps[0], channel.Dup(eps[0])} {
		if _, ok := channel.LookupStats(c); !ok {
			t.Fatalf("LookupStats of a %T: not ok", c)
		}
		if err := channel.Flush(ctx, c); err != nil {
			t.Fatalf("Flush of a %T: %v", c, err)
		}
	}
}

// fpattern is n bytes that differ with seed.
func fpattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}
