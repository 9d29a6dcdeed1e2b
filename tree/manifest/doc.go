// Package manifest keeps recovery sets on disk, as par2 does: for one
// file or several, each file's Merkle tree (package tree's, hash for hash),
// its size and mode, and Reed–Solomon parity shared across the files, so
// that later a file can be checked segment by segment, and damaged,
// truncated or missing files rebuilt without the originals.
//
// # Levels
//
// A Manifest works on any io.ReaderAt: Create writes one, Open reads one
// back (checking its own damage), Check compares a file with it, Plan says
// whether the parity can rebuild what is lost, and Repair rebuilds it into
// Targets, checking each segment against the tree first.
//
// A Set is a manifest opened with the directory its files are in, through
// os.OpenRoot: Set.Check and Set.Repair are what sigcheck's verify and
// repair run. A Set never reads or writes outside its directory, follows
// no symbolic link inside it, opens nothing but regular files (a FIFO is
// never waited on), never moves the user's files, and never overwrites a
// file that may not be the manifest's (see Set.Repair) without being told
// to.
//
// # Parity
//
// Version 3 manifests use Leopard's Reed–Solomon code over GF(2^16) from
// github.com/klauspost/reedsolomon: a stripe of up to 65536 segments is
// one code, so its parity rebuilds any lost segments up to its count,
// wherever they fall, as par2's does (par2 describes at most 32768 blocks).
// Its O(n log n) encoding is what makes that affordable: par2 pays a
// multiply-add per data block and recovery block. Sets of more segments
// are cut into interleaved stripes. The parity is chosen as par2 chooses
// it: a percentage of the segments (Redundancy, 5 % by default) or a count
// (Recovery).
//
// Version 2 manifests (before issue 28: a Cauchy code over GF(2^8) in
// stripes of up to 256 segments, no modes) are still opened, checked and
// repaired; Create writes version 3.
//
// # Bounds
//
// A manifest is input like any other: every size in it is bounded before
// it is used, reports list damage as runs of segments, and the work and
// memory of Open, Check, Plan and Repair are bounded by the bytes present
// (the manifest's and the files'), never by the sizes a manifest claims.
package manifest
