//go:build unix

package manifest

import (
	"io/fs"
	"syscall"
)

// openNonblock keeps an open from waiting on a FIFO swapped in for a file
// after it was looked at (regular files ignore it).
const openNonblock = syscall.O_NONBLOCK

// links returns a file's hard links.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
