// Package fuzz holds the fuzz targets of sigcheck, one per decoder and
// parser of untrusted input, with their seed corpora in testdata/fuzz.
// A grammar that is unexported has its target beside it instead
// (channel's FuzzPayload, seeds in channel/testdata/fuzz); CI fuzzes both
// packages' targets.
// `go test ./fuzz` runs the seeds; to fuzz one target:
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzParseDatatype$' -fuzztime 1m
//
// Every target checks more than the absence of a panic: what decodes must
// encode back to the same bytes, what parses must print and parse back to
// the same value.
package fuzz
