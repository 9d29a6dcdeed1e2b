package channel

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

// Bandwidth as OSU's osu_bw measures it: a window of non-blocking sends,
// the receives posted ahead, an acknowledgement per window; unprotected
// beside each protection, in the same run.
//
//	go test ./channel -run '^$' -bench Bandwidth -count 6 | benchstat -col /protect -
func BenchmarkBandwidth(b *testing.B) {
	const window = 16
	for _, transport := range []string{"local", "tcp"} {
		for _, size := range []int{1 << 10, 1 << 20, 16 << 20} {
			for _, protect := range []string{"none", "checksum", "merkle"} {
				b.Run(fmt.Sprintf("transport=%s/size=%s/protect=%s", transport, sizeName(size), protect), func(b *testing.B) {
					comms := benchComms(b, transport, protect)
					data := pattern(size, 1)
					bufs := make([][]byte, window)
					for i := range bufs {
						bufs[i] = make([]byte, size)
					}
					ctx := context.Background()
					b.SetBytes(int64(size * window))
					b.ReportAllocs()
					done := make(chan error, 1)
					b.ResetTimer()
					go func() {
						// The next window's receives are posted before the
						// acknowledgement, so that every message finds its buffer.
						c := comms[1]
						post := func() []*Request {
							reqs := make([]*Request, window)
							for i := range reqs {
								reqs[i] = Irecv(ctx, c, 0, 1, bufs[i])
							}
							return reqs
						}
						reqs := post()
						for k := range b.N {
							if err := WaitAll(reqs...); err != nil {
								done <- err
								return
							}
							if k < b.N-1 {
								reqs = post()
							}
							if err := c.Send(ctx, 0, 2, nil); err != nil {
								done <- err
								return
							}
						}
						done <- nil
					}()
					c := comms[0]
					for range b.N {
						reqs := make([]*Request, window)
						for i := range reqs {
							reqs[i] = Isend(ctx, c, 1, 1, data)
						}
						if err := WaitAll(reqs...); err != nil {
							b.Fatal(err)
						}
						if _, err := c.Recv(ctx, 1, 2, nil); err != nil {
							b.Fatal(err)
						}
					}
					if err := <-done; err != nil {
						b.Fatal(err)
					}
				})
			}
		}
	}
}

// Latency as osu_latency: ping-pong, half the round trip.
func BenchmarkLatency(b *testing.B) {
	for _, transport := range []string{"local", "tcp"} {
		for _, size := range []int{1, 1 << 10, 64 << 10, 1 << 20} {
			for _, protect := range []string{"none", "checksum", "merkle"} {
				b.Run(fmt.Sprintf("transport=%s/size=%s/protect=%s", transport, sizeName(size), protect), func(b *testing.B) {
					comms := benchComms(b, transport, protect)
					msg, buf := pattern(size, 2), make([]byte, size)
					ctx := context.Background()
					done := make(chan error, 1)
					b.SetBytes(int64(size))
					b.ReportAllocs()
					b.ResetTimer()
					go func() {
						c := comms[1]
						for range b.N {
							if _, err := c.Recv(ctx, 0, 1, buf); err != nil {
								done <- err
								return
							}
							if err := c.Send(ctx, 0, 1, msg); err != nil {
								done <- err
								return
							}
						}
						done <- nil
					}()
					c := comms[0]
					rbuf := make([]byte, size)
					for range b.N {
						if err := c.Send(ctx, 1, 1, msg); err != nil {
							b.Fatal(err)
						}
						if _, err := c.Recv(ctx, 1, 1, rbuf); err != nil {
							b.Fatal(err)
						}
					}
					if err := <-done; err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N)/2, "µs/one-way")
				})
			}
		}
	}
}

// benchComms returns the two ranks of a job over transport ("local",
// "tcp" or "tcp-auth"), under protect ("none", "checksum" or "merkle"), closed when tb
// ends.
func benchComms(b testing.TB, transport, protect string) []Comm {
	var eps []*Endpoint
	var err error
	switch transport {
	case "local":
		eps, err = NewLocal(2)
	case "tcp":
		eps, err = startTCP(2, []byte("bench"))
	case "tcp-auth": // links whose frames are authenticated (channel/tcp's auth.go)
		eps, err = startTCPAuth(2, []byte("bench"))
	default:
		b.Fatalf("no transport %q", transport)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		for _, ep := range eps {
			ep.Close()
		}
	})
	comms := make([]Comm, 2)
	for i, ep := range eps {
		switch protect {
		case "none":
			comms[i] = ep
		case "checksum":
			comms[i], err = WithChecksum(ep)
		case "merkle":
			comms[i], err = WithMerkle(ep)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	return comms
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// loopbackPair returns the two ends of a bare loopback TCP connection,
// with the socket buffers the channel's links have, closed when b ends.
func loopbackPair(b *testing.B) (cs, cr net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	cs, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	if cr = <-accepted; cr == nil {
		b.Fatal("no connection accepted")
	}
	b.Cleanup(func() { cs.Close(); cr.Close() })
	for _, c := range []net.Conn{cs, cr} {
		c.(*net.TCPConn).SetReadBuffer(sockBuf)
		c.(*net.TCPConn).SetWriteBuffer(sockBuf)
	}
	return cs, cr
}

// The limit for BenchmarkBandwidth over TCP: the same windows of writes
// and acknowledgements on a bare loopback connection (same socket
// buffers), no frames, no engine.
//
//	go test ./channel -run '^$' -bench 'Loopback|Bandwidth/transport=tcp' -count 6
func BenchmarkLoopback(b *testing.B) {
	const window = 16
	for _, size := range []int{1 << 20, 16 << 20} {
		b.Run("size="+sizeName(size), func(b *testing.B) {
			cs, cr := loopbackPair(b)
			data, buf := pattern(size, 1), make([]byte, size)
			b.SetBytes(int64(size * window))
			done := make(chan error, 1)
			b.ResetTimer()
			go func() {
				for range b.N {
					for range window {
						if _, err := io.ReadFull(cr, buf); err != nil {
							done <- err
							return
						}
					}
					if _, err := cr.Write([]byte{1}); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			var ack [1]byte
			for range b.N {
				for range window {
					if _, err := cs.Write(data); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := io.ReadFull(cs, ack[:]); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// The plain Go peer of BenchmarkLatency over TCP, and of sigcheck run
// -transport tcp latency (scripts/tcp-latency.sh runs it beside C Open
// MPI): a ping-pong of blocking Read and Write on a bare loopback
// connection, no frames, no engine — what a Go programmer writes
// without this package.
//
//	go test ./channel -run '^$' -bench 'LoopbackLatency|Latency/transport=tcp' -count 6
func BenchmarkLoopbackLatency(b *testing.B) {
	for _, size := range []int{1, 1 << 10, 64 << 10, 1 << 20} {
		b.Run("size="+sizeName(size), func(b *testing.B) {
			cs, cr := loopbackPair(b)
			msg := pattern(size, 2)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			done := make(chan error, 1)
			b.ResetTimer()
			go func() {
				buf := make([]byte, size)
				for range b.N {
					if _, err := io.ReadFull(cr, buf); err != nil {
						done <- err
						return
					}
					if _, err := cr.Write(buf); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			buf := make([]byte, size)
			for range b.N {
				if _, err := cs.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(cs, buf); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N)/2, "µs/one-way")
		})
	}
}

// Issue 14's goals for protected latency as ratios from one run: each
// iteration makes one round trip unprotected, one under the checksum
// layer and one under the Merkle layer (in turn, on three pairs of ranks),
// so that the three see the same load; it reports the unprotected
// one-way time and each layer's time over it (goal: ≤ 1.3 over TCP at
// ≤ 64 KiB and for 1 MiB, ≤ 1.5 in process for small messages). allocs/op
// counts the three round trips (goal: the protected ones allocate
// nothing).
//
//	go test ./channel -run '^$' -bench ProtectionOverhead -count 6
func BenchmarkProtectionOverhead(b *testing.B) {
	protects := []string{"none", "checksum", "merkle"}
	for _, transport := range []string{"local", "tcp"} {
		for _, size := range []int{1, 1 << 10, 64 << 10, 1 << 20} {
			b.Run(fmt.Sprintf("transport=%s/size=%s", transport, sizeName(size)), func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				pairs := make([][]Comm, len(protects))
				echoes := make(chan error, len(protects))
				for i, p := range protects {
					pairs[i] = benchComms(b, transport, p)
					go func(c Comm) {
						buf := make([]byte, size)
						for {
							st, err := c.Recv(ctx, 0, 1, buf)
							if err == nil {
								err = c.Send(ctx, 0, 1, buf[:st.Len])
							}
							if err != nil {
								echoes <- err
								return
							}
						}
					}(pairs[i][1])
				}
				msg, buf := pattern(size, 4), make([]byte, size)
				spent := make([]time.Duration, len(protects))
				b.SetBytes(int64(size))
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					for k := range protects {
						i := (k + n) % len(protects) // each goes first in turn
						c := pairs[i][0]
						t := time.Now()
						if err := c.Send(ctx, 1, 1, msg); err != nil {
							b.Fatal(err)
						}
						if _, err := c.Recv(ctx, 1, 1, buf); err != nil {
							b.Fatal(err)
						}
						spent[i] += time.Since(t)
					}
					n++
				}
				cancel()
				for range protects {
					<-echoes
				}
				b.ReportMetric(float64(spent[0].Nanoseconds())/1e3/float64(n)/2, "µs/one-way")
				for i, p := range protects[1:] {
					b.ReportMetric(float64(spent[i+1])/float64(spent[0]), p+"/none")
				}
			})
		}
	}
}
