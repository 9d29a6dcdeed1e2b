package fuzz

import (
	"bytes"
	"errors"
	"net"
	"testing"

	"github.com/sigcheck/sigcheck/channel/tcp"
)

// FuzzJobFile: the file rank 0 of an mpirun job writes for the others
// (tcp.ConfigFromEnv) parses only as an address with a port and a
// secret line, and what parses is what a writer would have written.
func FuzzJobFile(f *testing.F) {
	f.Add([]byte("127.0.0.1:40263\n\n"))
	f.Add([]byte("[::1]:8080\n3f2a9c\n"))
	f.Add([]byte("127.0.0.1:40263\n"))
	f.Add([]byte("host:0\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		addr, secret, err := tcp.ParseJobFile(b)
		if err != nil {
			if !errors.Is(err, tcp.ErrJobFile) {
				t.Fatalf("an error that is not ErrJobFile: %v", err)
			}
			return
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			t.Fatalf("address %q: %v", addr, err)
		}
		if again := []byte(addr + "\n" + string(secret) + "\n"); !bytes.Equal(again, b) {
			t.Fatalf("%q parsed as %q, %q", b, addr, secret)
		}
	})
}
