//go:build mpi

package mpi

// The limits between the ways a frame is sent, for the external tests.
var (
	InlineMax = inlineMax
	CopyMax   = copyMax
)
