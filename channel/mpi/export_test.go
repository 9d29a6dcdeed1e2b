//go:build mpi

package mpi

// InlineMax is the largest payload sent in its frame's message, for the
// external tests.
var InlineMax = inlineMax
