//go:build !unix

package manifest

import "io/fs"

func fileOwner(fs.FileInfo) (uid, gid uint32, ok bool) { return 0, 0, false }
