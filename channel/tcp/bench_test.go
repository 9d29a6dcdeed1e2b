package tcp

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/zeebo/blake3"

	"github.com/sigcheck/sigcheck/channel"
)

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// BenchmarkAuth: what authenticated links cost, as ratios from one run.
// Each iteration moves the same traffic over two pairs of ranks on
// loopback, one whose link is not authenticated (AuthOff) and one whose
// link is (AuthOn), each first every other time, so that both see the
// same load:
//
//   - op=latency: a round trip, as osu_latency; µs/one-way is the
//     unauthenticated one's, on/off the authenticated one's over it;
//   - op=bandwidth: a window of 16 messages and an acknowledgement, as
//     osu_bw; MB/s-off and MB/s-on, and on/off their times' ratio.
//
// Two ranks in one process do not poll their sockets (poll_load.go):
// scripts/tcp-latency.sh measures the same between processes (its auth
// rows).
//
//	go test ./channel/tcp -run '^$' -bench Auth -count 6
func BenchmarkAuth(b *testing.B) {
	for _, op := range []string{"latency", "bandwidth"} {
		for _, size := range []int{1, 64 << 10, 1 << 20} {
			b.Run(fmt.Sprintf("op=%s/size=%s", op, sizeName(size)), func(b *testing.B) {
				benchAuth(b, op, size)
			})
		}
	}
}

const benchWindow = 16

func benchAuth(b *testing.B, op string, size int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	auths := []Auth{AuthOff, AuthOn}
	pairs := make([][]*channel.Endpoint, len(auths))
	echoes := make(chan error, len(auths))
	for i, a := range auths {
		eps, err := Loopback(ctx, 2, Config{Auth: a})
		if err != nil {
			b.Fatal(err)
		}
		defer closeAll(eps)
		pairs[i] = eps
		go func(c channel.Comm) { echoes <- echo(ctx, c, op, size) }(eps[1])
	}
	msg := pattern(size, 4)
	bufs := make([][]byte, benchWindow)
	for i := range bufs {
		bufs[i] = make([]byte, size)
	}
	spent := make([]time.Duration, len(auths))
	b.SetBytes(int64(size))
	if op == "bandwidth" {
		b.SetBytes(int64(size * benchWindow))
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for k := range auths {
			i := (k + n) % len(auths) // each goes first in turn
			c := pairs[i][0]
			t := time.Now()
			var err error
			if op == "latency" {
				if err = c.Send(ctx, 1, 1, msg); err == nil {
					_, err = c.Recv(ctx, 1, 1, bufs[0])
				}
			} else {
				reqs := make([]*channel.Request, benchWindow)
				for w := range reqs {
					reqs[w] = channel.Isend(ctx, c, 1, 1, msg)
				}
				if err = channel.WaitAll(reqs...); err == nil {
					_, err = c.Recv(ctx, 1, 2, nil)
				}
			}
			if err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(t)
		}
		n++
	}
	cancel()
	for range auths {
		<-echoes
	}
	ratio := float64(spent[1]) / float64(spent[0])
	if op == "latency" {
		b.ReportMetric(float64(spent[0].Nanoseconds())/1e3/float64(n)/2, "µs/one-way")
	} else {
		for i, name := range []string{"MB/s-off", "MB/s-on"} {
			b.ReportMetric(float64(size*benchWindow*n)/spent[i].Seconds()/1e6, name)
		}
	}
	b.ReportMetric(ratio, "on/off")
}

// echo is rank 1's side of benchAuth until ctx is done: each message
// back (latency), or each window's receives posted ahead and an
// acknowledgement (bandwidth).
func echo(ctx context.Context, c channel.Comm, op string, size int) error {
	bufs := make([][]byte, benchWindow)
	for i := range bufs {
		bufs[i] = make([]byte, size)
	}
	for {
		if op == "latency" {
			st, err := c.Recv(ctx, 0, 1, bufs[0])
			if err == nil {
				err = c.Send(ctx, 0, 1, bufs[0][:st.Len])
			}
			if err != nil {
				return err
			}
			continue
		}
		reqs := make([]*channel.Request, benchWindow)
		for i := range reqs {
			reqs[i] = channel.Irecv(ctx, c, 0, 1, bufs[i])
		}
		err := channel.WaitAll(reqs...)
		if err == nil {
			err = c.Send(ctx, 0, 2, nil)
		}
		if err != nil {
			return err
		}
	}
}

// BenchmarkTag: the tag an authenticated link computes (GMAC: AES-256
// in GCM over no plaintext) beside the keyed hashes it could have been —
// keyed BLAKE3 (github.com/zeebo/blake3) and HMAC-SHA256 — and a plain
// copy of the same bytes, at a header's size, a chunk's and a frame's.
// The link computes each chunk's tag once on each side.
//
//	go test ./channel/tcp -run '^$' -bench Tag -count 6
func BenchmarkTag(b *testing.B) {
	key := []byte("a key of 32 bytes for each tag..")
	for _, size := range []int{64, authChunk, 1 << 20} {
		data := pattern(size, 1)
		var out [32]byte
		b.Run("size="+sizeName(size)+"/mac=copy", func(b *testing.B) {
			dst := make([]byte, size)
			b.SetBytes(int64(size))
			for b.Loop() {
				copy(dst, data)
			}
		})
		b.Run("size="+sizeName(size)+"/mac=gmac", func(b *testing.B) {
			g := newGMAC(key)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				g.tag(out[:tagSize], 1, 1, data)
			}
		})
		b.Run("size="+sizeName(size)+"/mac=blake3", func(b *testing.B) {
			h, err := blake3.NewKeyed(key)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				h.Reset()
				h.Write(data)
				h.Sum(out[:0])
			}
		})
		b.Run("size="+sizeName(size)+"/mac=hmac-sha256", func(b *testing.B) {
			h := hmac.New(sha256.New, key)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				h.Reset()
				h.Write(data)
				h.Sum(out[:0])
			}
		})
	}
}
