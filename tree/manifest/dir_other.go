//go:build !unix

package manifest

import (
	"io/fs"
	"os"
)

// openNonblock is 0 where there are no FIFOs to wait on.
const openNonblock = 0

// links returns 1: the system does not say.
func links(fs.FileInfo) uint64 { return 1 }

// keepOwner does nothing where files have no owner to keep.
func keepOwner(*os.File, fs.FileInfo) error { return nil }
