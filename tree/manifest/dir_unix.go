//go:build unix

package manifest

import (
	"fmt"
	"io/fs"
	"os"
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

// keepOwner gives f the owner and group of the file fi describes, as
// far as this process may.
func keepOwner(f *os.File, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if err := f.Chown(int(st.Uid), int(st.Gid)); err != nil {
		return fmt.Errorf("could not keep its owner, uid %d gid %d: %v", st.Uid, st.Gid, err)
	}
	return nil
}
