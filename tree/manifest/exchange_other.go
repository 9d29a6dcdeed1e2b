//go:build !linux

package manifest

import (
	"errors"
	"os"
)

// exchange is not had here: the caller checks, then renames.
func exchange(*os.File, string, string) error { return errors.ErrUnsupported }

// keepXattrs does nothing here.
func keepXattrs(*os.File, *Dir, string) error { return nil }
