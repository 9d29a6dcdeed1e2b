module github.com/sigcheck/sigcheck

go 1.26

require (
	github.com/klauspost/reedsolomon v1.14.2
	github.com/leanovate/gopter v0.2.11
	github.com/zeebo/xxh3 v1.1.0
	golang.org/x/sys v0.30.0
)

require github.com/klauspost/cpuid/v2 v2.3.0 // indirect
