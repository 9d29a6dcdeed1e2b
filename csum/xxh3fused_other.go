//go:build !amd64

package csum

// haveXXH3Kernel is false: CopySum streams XXH3 through zeebo/xxh3's
// Hasher, which has NEON on arm64.
var haveXXH3Kernel = false

func xxh3Blocks(acc *xxh3Acc, p []byte) { xxh3BlocksGeneric(acc, p, len(p)/xxh3Block) }
