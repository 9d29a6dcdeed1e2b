package csum

import "unsafe"

// copyNT copies n bytes (a multiple of 64) to a 16-byte aligned dst with
// non-temporal stores (copy_amd64.s).
//
//go:noescape
func copyNT(dst, src *byte, n uintptr)

// sfence orders the non-temporal stores before every later store.
func sfence()

const haveStreamingCopy = true

// streamCopy copies src into dst (len(dst) ≥ len(src)) with non-temporal
// stores for the 64-byte aligned body and ordinary copies for the ends.
// The caller calls sfence after the last streamCopy of a sequence.
func streamCopy(dst, src []byte) {
	n := len(src)
	if n == 0 {
		return
	}
	head := min(int(-uintptr(unsafe.Pointer(&dst[0]))&63), n)
	copy(dst[:head], src[:head])
	body := (n - head) &^ 63
	if body > 0 {
		copyNT(&dst[head], &src[head], uintptr(body))
	}
	copy(dst[head+body:n], src[head+body:n])
}
