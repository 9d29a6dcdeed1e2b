package wire

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Bootstrap messages, before the link switches to frames: an address is a
// 1-byte length and that many bytes; the table is Size addresses.

// EncodeAddr encodes an address (at most 255 bytes).
func EncodeAddr(a string) []byte {
	return append([]byte{byte(len(a))}, a...)
}

// ReadAddr reads an address.
func ReadAddr(r io.Reader) (string, error) {
	var n [1]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return "", err
	}
	b := make([]byte, n[0])
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b), nil
}

// EncodeTable encodes the table of every rank's address.
func EncodeTable(addrs []string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(addrs)))
	for _, a := range addrs {
		b = append(b, EncodeAddr(a)...)
	}
	return b
}

// ReadTable reads the table of a job of size ranks.
func ReadTable(r io.Reader, size int) ([]string, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	if got := binary.LittleEndian.Uint32(n[:]); got != uint32(size) {
		return nil, fmt.Errorf("%w: a table of %d ranks for a job of %d", ErrProtocol, got, size)
	}
	addrs := make([]string, size)
	for i := range addrs {
		a, err := ReadAddr(r)
		if err != nil {
			return nil, err
		}
		addrs[i] = a
	}
	return addrs, nil
}
