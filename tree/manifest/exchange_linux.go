package manifest

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// exchange swaps the names a and b of directory dir atomically
// (renameat2 with RENAME_EXCHANGE): the only way to put a file in the
// place of another and be sure, after, of what was taken out.
func exchange(dir *os.File, a, b string) error {
	return unix.Renameat2(int(dir.Fd()), a, int(dir.Fd()), b, unix.RENAME_EXCHANGE)
}

// keepXattrs copies the extended attributes of the file at name (ACLs,
// capabilities, labels, users' own) to f, which takes its place: a file
// laid out anew is a new inode, and would lose them.
func keepXattrs(f *os.File, d *Dir, name string) error {
	src, _, err := d.Open(name)
	if err != nil || src == nil {
		return err
	}
	defer src.Close()
	list := make([]byte, 64<<10)
	n, err := unix.Flistxattr(int(src.Fd()), list)
	if err != nil {
		if err == unix.ENOTSUP {
			return nil
		}
		return fmt.Errorf("could not read its extended attributes: %v", err)
	}
	val := make([]byte, 64<<10)
	var lost []string
	for _, attr := range strings.Split(strings.TrimRight(string(list[:n]), "\x00"), "\x00") {
		if attr == "" {
			continue
		}
		m, err := unix.Fgetxattr(int(src.Fd()), attr, val)
		if err == nil {
			err = unix.Fsetxattr(int(f.Fd()), attr, val[:m], 0)
		}
		if err != nil {
			lost = append(lost, attr)
		}
	}
	if len(lost) > 0 {
		return fmt.Errorf("could not keep its extended attributes %s", strings.Join(lost, ", "))
	}
	return nil
}
