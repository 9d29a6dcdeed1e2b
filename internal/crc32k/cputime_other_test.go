//go:build !linux

package crc32k

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }
