//go:build !amd64

package crc32k

// Available is false: hash/crc32 does all the work.
var Available = false

var useKernel = false

const kernelMin = 128

func updateKernel(crc uint32, p []byte) uint32 { panic("crc32k: no kernel on this architecture") }

func copyKernel(crc uint32, dst, src []byte, nt bool) uint32 {
	panic("crc32k: no kernel on this architecture")
}
