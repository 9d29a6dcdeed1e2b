//go:build !amd64

package gf

// Without an assembly kernel, Mul64 is the portable product of clmul.go.

const useCLMUL = false

func mul64CLMUL(a, b uint64) uint64 { return mul64Generic(a, b) }
