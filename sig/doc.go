// Package sig computes datatype signatures: short hashes of MPI type
// signatures that a sender and a receiver compare to know they agree on
// what the bytes of a message are, following Gropp ("Runtime checking of
// datatype signatures in MPI", 2000) and Langou, Bosilca, Fagg and Dongarra
// ("Hash functions for datatype signatures in MPI", 2005).
//
// # Signatures and algebras
//
// A type signature is the sequence of basic types in a message: a struct
// {int; double[3]} sent twice is int, double, double, double, int, double,
// double, double. Its signature is a Sig: a checksum of that sequence and
// its length. An Algebra computes them so that the signature of a
// concatenation follows from the signatures of the parts (Concat), and the
// signature of n copies from the signature of one (Repeat). That is what
// makes the signature of vector(10^9, 3, 5, double) a matter of nanoseconds:
// Of and Prefix walk the description of a Datatype, never its expansion.
//
// ParseAlgebra picks an algebra by spec:
//
//   - gfd:w=64,m=1, the default (DefaultSpec) — one checksum over
//     GF(2^64), whose multiplier has order 2^64-1: a substitution of one
//     basic type for another at one element, over a run, or at a member of
//     every copy of a repeated unit is detected in signatures of up to
//     2^63 elements (the proof is at gfd64 in gf64.go). Concat and Repeat
//     are O(1), tens of nanoseconds with the CPU's carry-less multiply.
//   - gfd:w=W,m=M, 6 ≤ W ≤ 32 — m checksums over GF(2^w) (package gf), the
//     paper's recommendation. Checksum j multiplies by α_j = α^j, which
//     makes the m checksums the syndromes of a Reed–Solomon code: any m or
//     fewer substituted elements in signatures of at most 2^w-1 elements are
//     detected, and a transposition of two different elements d places
//     apart is missed only when 2^w-1 divides d. Beyond 2^w-1 elements runs
//     vanish: k·(2^w-1) copies of any one basic type hash to 0, so 255 ints
//     match 255 floats at w = 8 and 65535 at w = 16 (Describe, and sigcheck
//     sig -list, give the length for every algebra). Concat and Repeat are
//     O(1).
//   - crc16-ccitt-false, crc16-xmodem, crc16-arc, crc32, crc32-bzip2,
//     crc32c — each element is one byte, so the signature of elements whose
//     codes are bytes is the catalogue CRC of those bytes. Concat and Repeat
//     are O(log n) (combination by x^(8n) mod p, as zlib's crc32_combine),
//     where the paper's were O(n). One substituted element is always
//     detected; runs vanish at the polynomial's period (65534 elements for
//     the CRC-16s, 2^32-1 or 2^32-2 for the CRC-32s).
//   - xor-bs1:w=W,m=M and mmm-bs1:w=W,m=M — Gropp's XOR-and-rotate and the
//     paper's sum modulo 2^w-1, kept for comparison: they carry no detection
//     guarantee and collide several times more than a random mapping.
//
// Widths below 6 are refused: the basic types' codes differ in their low 6
// bits, not fewer (aint's low 5 bits are 0).
//
// Quality measures how an algebra spreads a panel of distinct signatures,
// as the paper's Table 1 does: Panel is a panel of its kind (1 to 64
// elements), LongPanel one of 256 to 10^6 elements, on which gfd at w = 8
// or 16 and the CRC-16s do worse than the paper says (PaperCollisions,
// MeetsPaper).
//
// Every algebra uses the Horner order f(X‖Y) = f(X)·α^|Y| + f(Y): the last
// element is multiplied by α^0, the first by α^(n-1). testdata/vectors.txt
// publishes the signatures of a set of datatypes in every algebra, for
// other implementations to check against.
//
// # Basic types
//
// The predefined types are MPI's C set (Int, Double, Byte, Packed, …, and
// the pair types FloatInt …) and its Fortran set (Integer, Real,
// DoublePrecision, …, TwoInteger …), each Fortran type a basic type of its
// own, as MPI's matching rules make it. Each basic type hashes as a 64-bit
// code spread over all bits whose low 6 bits are distinct and neither 0
// nor 63, so every algebra of width 6 or more tells them apart; small
// consecutive codes would make short signatures collide alike in every
// algebra.
// FromGo derives a Datatype from a Go type; a struct tag (`sig:"int"`), As
// or CNames says which C type a Go value stands for, since Go has no C int.
//
// # Matching
//
// Match applies MPI's rules: for point-to-point the sender's type signature
// must be a prefix of the receiver's, for collectives they must be equal;
// Packed matches any type and Byte any byte of storage, so when either side
// is all Packed or all Byte the sizes decide. (A datatype that mixes Byte
// with other types is matched element by element: stricter than MPI, which
// lets such a Byte stand for any byte of storage.) On a mismatch it returns a *MismatchError with the
// index of the first differing element, found by binary search over prefix
// signatures, the two basic types, where each sits inside its datatype
// ("item 3 → struct member 2 → vector block 5 → element 1") and a
// run-length type map around it. A sender that cannot ship its datatype
// ships a Stamp, and the receiver calls Stamp.Check. The index is found in
// the 64-bit default algebra whatever algebra decided, checked, and if its
// hash collided, found again by walking both type maps: it is always the
// true first difference.
//
// What it is not: a checker of buffers against types (it never looks at
// data), nor of MPI's handle semantics; datatypes with alignment padding in
// their extent need an explicit Resized, as in portable MPI code.
package sig
