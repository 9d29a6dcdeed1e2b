package sig

// The predefined datatypes of MPI's C binding (MPI 4.1 §3.2.2, §5.9.4),
// with LP64 sizes, and of its Fortran binding (§3.2.2, with the optional
// INTEGERn and REALn), with gfortran's default sizes (INTEGER, REAL and
// LOGICAL of 4 bytes). The pair types used by MINLOC and MAXLOC are
// predefined but derived: their type signatures have two elements. A
// Fortran type is a basic type of its own, not the C type of its size:
// MPI's matching rules pair MPI_INTEGER with MPI_INTEGER, not with MPI_INT
// nor with MPI_INTEGER4.
var (
	Char               = basicTypes[0]
	SignedChar         = basicTypes[1]
	UnsignedChar       = basicTypes[2]
	Short              = basicTypes[3]
	UnsignedShort      = basicTypes[4]
	Int                = basicTypes[5]
	Unsigned           = basicTypes[6]
	Long               = basicTypes[7]
	UnsignedLong       = basicTypes[8]
	LongLong           = basicTypes[9]
	UnsignedLongLong   = basicTypes[10]
	Float              = basicTypes[11]
	Double             = basicTypes[12]
	LongDouble         = basicTypes[13]
	WChar              = basicTypes[14]
	CBool              = basicTypes[15]
	Int8               = basicTypes[16]
	Int16              = basicTypes[17]
	Int32              = basicTypes[18]
	Int64              = basicTypes[19]
	Uint8              = basicTypes[20]
	Uint16             = basicTypes[21]
	Uint32             = basicTypes[22]
	Uint64             = basicTypes[23]
	CFloatComplex      = basicTypes[24]
	CDoubleComplex     = basicTypes[25]
	CLongDoubleComplex = basicTypes[26]
	// Byte matches any byte of storage: a message of Byte elements matches
	// any type of the same size, and the other way round.
	Byte = basicTypes[27]
	// Packed matches any type: data packed by MPI_Pack, checked by size only.
	Packed = basicTypes[28]
	Aint   = basicTypes[29]
	Offset = basicTypes[30]
	Count  = basicTypes[31]

	Integer         = basicTypes[32]
	Real            = basicTypes[33]
	DoublePrecision = basicTypes[34]
	Complex         = basicTypes[35]
	DoubleComplex   = basicTypes[36]
	Logical         = basicTypes[37]
	Character       = basicTypes[38]
	Integer1        = basicTypes[39]
	Integer2        = basicTypes[40]
	Integer4        = basicTypes[41]
	Integer8        = basicTypes[42]
	Real4           = basicTypes[43]
	Real8           = basicTypes[44]

	FloatInt      = pairType("float_int", Float, 0, Int, 4, 8)
	DoubleInt     = pairType("double_int", Double, 0, Int, 8, 16)
	LongInt       = pairType("long_int", Long, 0, Int, 8, 16)
	TwoInt        = pairType("2int", Int, 0, Int, 4, 8)
	ShortInt      = pairType("short_int", Short, 0, Int, 4, 8)
	LongDoubleInt = pairType("long_double_int", LongDouble, 0, Int, 16, 32)

	TwoInteger         = pairType("2integer", Integer, 0, Integer, 4, 8)
	TwoReal            = pairType("2real", Real, 0, Real, 4, 8)
	TwoDoublePrecision = pairType("2double_precision", DoublePrecision, 0, DoublePrecision, 8, 16)
)

// pairTypes are the predefined pair types, in PredefinedNames' order.
var pairTypes = []*Datatype{FloatInt, DoubleInt, LongInt, TwoInt, ShortInt, LongDoubleInt,
	TwoInteger, TwoReal, TwoDoublePrecision}

// basicTypes lists the basic types with their codes. A code is the first
// eight bytes (big-endian) of SHA-256("sigcheck basic type " + name), with
// its low 6 bits replaced by the first value, counting up from the
// hash's own, that no earlier type took and that is neither 0 nor 63
// (TestBasicCodes re-derives them). So the codes are spread over all 64
// bits, and for every w ≥ 6 their low w bits are distinct, non-zero and
// not all ones: each algebra that keeps w ≥ 6 bits of an element tells all
// basic types apart, including mmm-bs1, for which 2^w-1 is 0.
//
// The codes are part of every signature and of the wire format: never
// change them.
var basicTypes = []*Datatype{
	newBasic("char", 1, 0xd3699ea04b039f07),
	newBasic("signed_char", 1, 0x6ddf542f10c22a88),
	newBasic("unsigned_char", 1, 0x9d5b2311750243aa),
	newBasic("short", 2, 0xc02b65a2d278803a),
	newBasic("unsigned_short", 2, 0x8e29340aaa9e711d),
	newBasic("int", 4, 0x392c0b0b619dfc42),
	newBasic("unsigned", 4, 0xeba6794cef11c83d, "unsigned_int"),
	newBasic("long", 8, 0xc11bddd226a86bab),
	newBasic("unsigned_long", 8, 0xb60732fe6a53c9ef),
	newBasic("long_long", 8, 0x9663662f42df5711, "long_long_int"),
	newBasic("unsigned_long_long", 8, 0x7754ec9cc1d023b0),
	newBasic("float", 4, 0x0dc7d5087013c0f8),
	newBasic("double", 8, 0x0acde7feab8508a2),
	newBasic("long_double", 16, 0xe514cbfc2976b953),
	newBasic("wchar", 4, 0x35ac8d1ee7728e21),
	newBasic("c_bool", 1, 0xc54450240c9708ee),
	newBasic("int8_t", 1, 0x5f7eebefbc80d72d),
	newBasic("int16_t", 2, 0x3e02f02469c50eb7),
	newBasic("int32_t", 4, 0xf5e8260e147c0071),
	newBasic("int64_t", 8, 0xc4435309d75c1027),
	newBasic("uint8_t", 1, 0xf9a64e63067e97bc),
	newBasic("uint16_t", 2, 0x01872f5df175dc5a),
	newBasic("uint32_t", 4, 0x3212a83b28887d7e),
	newBasic("uint64_t", 8, 0xfc62b3b5206fd6e8),
	newBasic("c_float_complex", 8, 0x8e084f144c5f07e6, "c_complex"),
	newBasic("c_double_complex", 16, 0x67d0e80c73751bd2),
	newBasic("c_long_double_complex", 32, 0xd0a7787f45f9fd29),
	newBasic("byte", 1, 0x4920e3f53de4a2f4),
	newBasic("packed", 1, 0x78455620080ffcc6),
	newBasic("aint", 8, 0x960945d90bccdae0),
	newBasic("offset", 8, 0xe446170799268294),
	newBasic("count", 8, 0xfc838b11c92c3eac),
	// Fortran's, appended so that no earlier code changes.
	newBasic("integer", 4, 0xba700fd484224e09),
	newBasic("real", 4, 0x30c47deba2ef1cb9),
	newBasic("double_precision", 8, 0x78fe6f2180530de5),
	newBasic("complex", 8, 0x689a94e4751145f6),
	newBasic("double_complex", 16, 0x03339ef4d60e0532),
	newBasic("logical", 4, 0x46bd94a7fca6b8d5),
	newBasic("character", 1, 0x8b1d32d8845cd34c),
	newBasic("integer1", 1, 0x28723938a4e04f96),
	newBasic("integer2", 2, 0x6bd0b7fc0a5aabf3),
	newBasic("integer4", 4, 0xac2d5f021338cc8f),
	newBasic("integer8", 8, 0x5ad3f1b01f5bef1b),
	newBasic("real4", 4, 0x13b77654791ec58a),
	newBasic("real8", 8, 0x5d040db64aa63b5c),
}

// predefined maps every name and alias of a predefined datatype, without
// the MPI_ prefix and in lower case, to it.
var predefined = map[string]*Datatype{}

func init() {
	for _, t := range basicTypes {
		predefined[t.name] = t
		for _, a := range t.aliases {
			predefined[a] = t
		}
	}
	for _, t := range pairTypes {
		predefined[t.name] = t
	}
}

// Predefined returns the predefined datatype with this name, as MPI spells
// it with or without the MPI_ prefix, in any case: "MPI_DOUBLE", "double",
// "unsigned_long". The second result is false for an unknown name.
func Predefined(name string) (*Datatype, bool) {
	t, ok := predefined[canonicalName(name)]
	return t, ok
}

// PredefinedNames returns the names of all predefined datatypes, basic
// types first, in a fixed order.
func PredefinedNames() []string {
	var names []string
	for _, t := range basicTypes {
		names = append(names, t.name)
	}
	for _, t := range pairTypes {
		names = append(names, t.name)
	}
	return names
}

func newBasic(name string, size int64, code uint64, aliases ...string) *Datatype {
	t := &Datatype{
		kind: kindBasic, name: name, aliases: aliases, code: code,
		elems: 1, size: size, lb: 0, ub: size, bounded: true,
		byteOnly: name == "byte", packedOnly: name == "packed",
	}
	t.run = Run{Type: t, Count: 1, Stride: size}
	return t
}

func pairType(name string, a *Datatype, da int64, b *Datatype, db int64, extent int64) *Datatype {
	s, err := Struct([]int64{1, 1}, []int64{da, db}, []*Datatype{a, b})
	if err == nil {
		s, err = Resized(0, extent, s)
	}
	if err != nil {
		panic(err)
	}
	s.name = name
	return s
}
