package csum_test

import (
	"fmt"

	"github.com/sigcheck/sigcheck/csum"
)

func ExampleLookup() {
	a, _ := csum.Lookup("crc32c")
	fmt.Println(a.Format(a.Sum([]byte("123456789"))), a.Detects.Bit3)
	// Output: e3069283 always
}

// The checksum of a message assembled from the checksums of its pieces.
func ExampleAlgorithm_Combine() {
	a, _ := csum.Lookup("crc64")
	head, tail := []byte("1234"), []byte("56789")
	whole := a.Combine(a.Sum(head), a.Sum(tail), int64(len(tail)))
	fmt.Println(a.Format(whole) == a.Format(a.Sum([]byte("123456789"))))
	// Output: true
}

// Copy and checksum in one pass.
func ExampleAlgorithm_CopySum() {
	a, _ := csum.Lookup("xxh3")
	src := []byte("what arrived is what was sent")
	dst := make([]byte, len(src))
	v := a.CopySum(dst, src)
	fmt.Println(string(dst), v == a.Sum(src))
	// Output: what arrived is what was sent true
}

// Streaming, as with any hash.Hash64.
func ExampleNew() {
	h, _ := csum.New("fnv1a64")
	h.Write([]byte("foo"))
	h.Write([]byte("bar"))
	fmt.Printf("%016x\n", h.Sum64())
	// Output: 85944171f73967e8
}
