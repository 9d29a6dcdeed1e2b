//go:build mpi

package mpi

// The limits between the ways a frame is sent, for the external tests.
var (
	InlineMax = inlineMax
	CopyMax   = copyMax
)

// SetCopyMax sets the largest payload sent from the staging ring (for
// measuring where the way should change), and returns what undoes it.
func SetCopyMax(n int) (undo func()) {
	old := copyMax
	copyMax = n
	return func() { copyMax = old }
}
