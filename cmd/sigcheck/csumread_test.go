package main

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// readPipelined and readSerial hand over the bytes in order, whatever the
// reader's pieces (and, for readSerial, whatever size it was told), and
// return a reader's error after the data read before it.
func TestReadPipelined(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{0, 1, readPiece - 1, readPiece, readPiece + 1, 3*readPiece + 17, 7 * readPiece} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		for name, r := range map[string]func() io.Reader{
			"plain":   func() io.Reader { return bytes.NewReader(data) },
			"half":    func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
			"dataerr": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) },
		} {
			var got, serial []byte
			k, err := readPipelined(r(), func(p []byte) { got = append(got, p...) })
			if err != nil || k != int64(n) || !bytes.Equal(got, data) {
				t.Errorf("%s, %d bytes: %d bytes, equal %v, %v", name, n, k, bytes.Equal(got, data), err)
			}
			for _, size := range []int64{int64(n), 0, -1} { // the size expected, or wrong, or unknown
				serial = serial[:0]
				k, err = readSerial(r(), size, func(p []byte) { serial = append(serial, p...) })
				if err != nil || k != int64(n) || !bytes.Equal(serial, data) {
					t.Errorf("serial, %s, %d bytes, size %d: %d bytes, %v", name, n, size, k, err)
				}
			}
		}
		boom := errors.New("disk on fire")
		var got []byte
		k, err := readPipelined(io.MultiReader(bytes.NewReader(data), iotest.ErrReader(boom)), func(p []byte) { got = append(got, p...) })
		if !errors.Is(err, boom) || k != int64(n) || !bytes.Equal(got, data) {
			t.Errorf("failing reader after %d bytes: %d bytes, %v", n, k, err)
		}
	}
}
