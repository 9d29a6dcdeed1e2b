package gf

import "golang.org/x/sys/cpu"

// The GF(2^64) product with the CPU's carry-less multiply (PCLMULQDQ,
// every x86-64 CPU since 2010): 6.5 ns a dependent product where the
// portable one of clmul.go takes 19 (BenchmarkGF64, shared 2-core Xeon).
// Mul64 picks it when the CPU has it; tests run both and compare them.

var useCLMUL = cpu.X86.HasPCLMULQDQ

//go:noescape
func mul64CLMUL(a, b uint64) uint64
