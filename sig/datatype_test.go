package sig

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// elem is one entry of a type map, as the reference expansion makes it.
type elem struct {
	t    *Datatype
	disp int64
}

// expand is the reference type map: a direct reading of the MPI
// definitions, element by element. It shares no code with the walks it
// checks (Of, Prefix, ElementAt, Runs).
func expand(t *Datatype, count uint64) []elem {
	var out []elem
	for i := range count {
		expandOne(t, int64(i)*t.Extent(), &out)
	}
	return out
}

func expandOne(t *Datatype, disp int64, out *[]elem) {
	switch t.kind {
	case kindBasic:
		*out = append(*out, elem{t, disp})
	case kindResized:
		expandOne(t.old, disp, out)
	case kindContiguous:
		for i := range t.count {
			expandOne(t.old, disp+i*t.old.Extent(), out)
		}
	case kindVector, kindHVector:
		for b := range t.count {
			start := b * t.stride
			if t.kind == kindVector {
				start *= t.old.Extent()
			}
			for c := range t.blocklen {
				expandOne(t.old, disp+start+c*t.old.Extent(), out)
			}
		}
	case kindIndexed, kindHIndexed, kindIndexedBlock, kindHIndexedBlock:
		for i, bl := range t.blocklens {
			start := t.displs[i]
			if t.kind == kindIndexed || t.kind == kindIndexedBlock {
				start *= t.old.Extent()
			}
			for c := range bl {
				expandOne(t.old, disp+start+c*t.old.Extent(), out)
			}
		}
	case kindStruct:
		for i, bl := range t.blocklens {
			for c := range bl {
				expandOne(t.types[i], disp+t.displs[i]+c*t.types[i].Extent(), out)
			}
		}
	}
}

func codesOf(es []elem) []uint64 {
	c := make([]uint64, len(es))
	for i, e := range es {
		c[i] = e.t.code
	}
	return c
}

var someBasics = []*Datatype{Int, Double, Char, Float, Short, LongDouble, Byte, Uint8, CDoubleComplex}

// randType builds a random datatype of bounded size from r: every
// constructor, negative strides and displacements, empty blocks, resized
// types, predefined pair types, and shared subtypes.
func randType(r *rand.Rand, depth int) *Datatype {
	if depth == 0 || r.IntN(4) == 0 {
		if r.IntN(8) == 0 {
			return []*Datatype{FloatInt, DoubleInt, TwoInt, LongDoubleInt}[r.IntN(4)]
		}
		return someBasics[r.IntN(len(someBasics))]
	}
	sub := randType(r, depth-1)
	small := func(n int) int64 { return int64(r.IntN(n)) }
	ints := func(n, lo, hi int) []int64 {
		s := make([]int64, n)
		for i := range s {
			s[i] = int64(lo + r.IntN(hi-lo+1))
		}
		return s
	}
	var t *Datatype
	var err error
	switch r.IntN(10) {
	case 0:
		t, err = Contiguous(small(4), sub)
	case 1:
		t, err = Vector(small(4), small(4), small(9)-4, sub)
	case 2:
		t, err = HVector(small(4), small(4), small(129)-64, sub)
	case 3:
		n := r.IntN(4)
		t, err = Indexed(ints(n, 0, 3), ints(n, -6, 6), sub)
	case 4:
		n := r.IntN(4)
		t, err = HIndexed(ints(n, 0, 3), ints(n, -64, 64), sub)
	case 5:
		t, err = IndexedBlock(small(3), ints(r.IntN(4), -6, 6), sub)
	case 6:
		t, err = HIndexedBlock(small(3), ints(r.IntN(4), -64, 64), sub)
	case 7, 8:
		n := r.IntN(4)
		ts := make([]*Datatype, n)
		for i := range ts {
			if r.IntN(3) == 0 {
				ts[i] = sub // shared subtype
			} else {
				ts[i] = randType(r, depth-1)
			}
		}
		t, err = Struct(ints(n, 0, 3), ints(n, -64, 64), ts)
	default:
		t, err = Resized(small(17)-8, small(65), sub)
	}
	if err != nil {
		panic(err)
	}
	return t
}

// typeGen yields random datatypes (drawn from a seed, so gopter reports
// the seed of a failure) with a count from 0 to 3.
type typeCase struct {
	T     *Datatype
	Count uint64
}

func typeCaseGen() gopter.Gen {
	return gen.UInt64().Map(func(seed uint64) typeCase {
		r := rand.New(rand.NewPCG(seed, 7))
		for {
			t := randType(r, 4)
			c := uint64(r.IntN(4))
			if t.elems*c <= 3000 {
				return typeCase{t, c}
			}
		}
	})
}

func TestSignaturesMatchExpansion(t *testing.T) {
	for _, spec := range []string{"gfd:w=8,m=2", "gfd:w=16,m=4", "crc32c", "xor-bs1:w=16,m=2", "mmm-bs1:w=16,m=2", "crc16-arc"} {
		alg := mustAlg(t, spec)
		props := gopter.NewProperties(params(300))
		props.Property(spec+": Of = flat signature of the expansion", prop.ForAll(func(c typeCase) bool {
			s, err := Of(alg, c.T, c.Count)
			return err == nil && s == flat(alg, codesOf(expand(c.T, c.Count)))
		}, typeCaseGen()))
		props.Property(spec+": Prefix(k) = flat signature of the first k elements", prop.ForAll(func(c typeCase, k uint16) bool {
			es := expand(c.T, c.Count)
			kk := uint64(k) % (uint64(len(es)) + 1)
			s, err := Prefix(alg, c.T, c.Count, kk)
			return err == nil && s == flat(alg, codesOf(es[:kk]))
		}, typeCaseGen(), gen.UInt16()))
		props.TestingRun(t)
	}
}

func TestWalksMatchExpansion(t *testing.T) {
	props := gopter.NewProperties(params(500))
	props.Property("Elements and Size agree with the expansion", prop.ForAll(func(c typeCase) bool {
		es := expand(c.T, 1)
		var size int64
		for _, e := range es {
			size += e.t.size
		}
		return c.T.Elements() == uint64(len(es)) && c.T.Size() == size
	}, typeCaseGen()))
	props.Property("bounds of types without resized are those of the elements", prop.ForAll(func(c typeCase) bool {
		if strings.Contains(c.T.String(), "resized") || strings.Contains(c.T.String(), "_int") ||
			strings.Contains(c.T.String(), "2int") || c.T.Elements() == 0 {
			return true
		}
		es := expand(c.T, 1)
		lb, ub := es[0].disp, es[0].disp+es[0].t.size
		for _, e := range es {
			lb, ub = min(lb, e.disp), max(ub, e.disp+e.t.size)
		}
		return c.T.LB() == lb && c.T.LB()+c.T.Extent() == ub
	}, typeCaseGen()))
	props.Property("ElementAt(k) is element k of the expansion", prop.ForAll(func(c typeCase, k uint16) bool {
		es := expand(c.T, c.Count)
		if len(es) == 0 {
			_, err := ElementAt(c.T, c.Count, 0)
			return err != nil
		}
		kk := uint64(k) % uint64(len(es))
		e, err := ElementAt(c.T, c.Count, kk)
		return err == nil && e.Index == kk && e.Type == es[kk].t && e.Disp == es[kk].disp
	}, typeCaseGen(), gen.UInt16()))
	props.Property("Runs from any start spell out the expansion", prop.ForAll(func(c typeCase, from uint16) bool {
		es := expand(c.T, c.Count)
		f := uint64(from) % (uint64(len(es)) + 1)
		var got []elem
		next := f
		for r := range Runs(c.T, c.Count, f) {
			if r.Index != next || r.Count == 0 {
				return false
			}
			for i := range r.Count {
				got = append(got, elem{r.Type, r.Disp + int64(i)*r.Stride})
			}
			next += r.Count
		}
		return slices.Equal(got, es[f:])
	}, typeCaseGen(), gen.UInt16()))
	props.Property("String parses back to the same datatype", prop.ForAll(func(c typeCase) bool {
		p, err := ParseDatatype(c.T.String())
		if err != nil || p.String() != c.T.String() {
			return false
		}
		a, _ := Of(Default(), p, c.Count)
		b, _ := Of(Default(), c.T, c.Count)
		return a == b && p.Size() == c.T.Size() && p.Extent() == c.T.Extent() && p.LB() == c.T.LB()
	}, typeCaseGen()))
	props.TestingRun(t)
}

// MPI's examples: the extent and size of a vector (MPI 4.1 §5.1.2, Example 5.2
// gives a vector(2, 3, 4, double) type map with extent 56 and 6 elements).
func TestConstructorKnownValues(t *testing.T) {
	cases := []struct {
		text             string
		elems            uint64
		size, lb, extent int64
	}{
		{"vector(2, 3, 4, double)", 6, 48, 0, 56},
		{"vector(3, 1, -2, int)", 3, 12, -16, 20},
		{"hvector(2, 3, 100, double)", 6, 48, 0, 124},
		{"indexed([3, 1], [4, 0], double)", 4, 32, 0, 56},
		{"hindexed([1, 2], [8, 0], int)", 3, 12, 0, 12},
		{"indexed_block(2, [0, 5], float)", 4, 16, 0, 28},
		{"struct([2, 1, 3], [0, 16, 26], [double, float, char])", 6, 23, 0, 29},
		{"resized(-4, 32, contiguous(3, int))", 3, 12, -4, 32},
		{"contiguous(0, double)", 0, 0, 0, 0},
		{"struct([], [], [])", 0, 0, 0, 0},
		{"float_int", 2, 8, 0, 8},
		{"MPI_DOUBLE_INT", 2, 12, 0, 16},
		{"long_double_int", 2, 20, 0, 32},
		{"vector(1e9, 3, 5, double)", 3e9, 24e9, 0, ((1e9-1)*5 + 3) * 8},
	}
	for _, c := range cases {
		dt, err := ParseDatatype(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		if dt.Elements() != c.elems || dt.Size() != c.size || dt.LB() != c.lb || dt.Extent() != c.extent {
			t.Errorf("%s: elements %d size %d lb %d extent %d; want %d %d %d %d",
				c.text, dt.Elements(), dt.Size(), dt.LB(), dt.Extent(), c.elems, c.size, c.lb, c.extent)
		}
	}
}

// The signature of vector(1e9, 3, 5, double) × 10^6 comes from the
// description: Repeat(Repeat(Repeat(double, 3), 1e9), 1e6), the same value
// as assembling the blocks another way.
func TestHugeDatatypeSignature(t *testing.T) {
	v := Must(Vector(1e9, 3, 5, Double))
	for _, alg := range []Algebra{Default(), mustAlg(t, "crc32c"), mustAlg(t, "gfd:w=8,m=2"), mustAlg(t, "mmm-bs1:w=16,m=2")} {
		s, err := Of(alg, v, 1e6)
		if err != nil {
			t.Fatal(err)
		}
		if s.Count != 3e15 {
			t.Fatalf("%v: count %d", alg, s.Count)
		}
		blk := alg.Repeat(alg.Basic(Double.Code()), 3)
		want := alg.Repeat(alg.Repeat(alg.Repeat(blk, 1e3), 1e6), 1e6)
		if s != want {
			t.Errorf("%v: %v, want %v", alg, s, want)
		}
		p, _ := Prefix(alg, v, 1e6, 3e15-1)
		if alg.Concat(p, alg.Basic(Double.Code())) != s {
			t.Errorf("%v: prefix of all but one element, plus a double, is not the whole", alg)
		}
	}
	if _, err := Of(Default(), v, 1e10); !errors.Is(err, ErrTooLarge) {
		t.Errorf("3e19 elements: %v", err)
	}
	if _, err := Vector(1e10, 1e10, 1, Double); !errors.Is(err, ErrDatatype) {
		t.Errorf("1e20 elements: %v", err)
	}
}

func TestConstructorErrors(t *testing.T) {
	big := Must(Contiguous(1<<40, Double))
	cases := map[string]func() (*Datatype, error){
		"negative count":          func() (*Datatype, error) { return Contiguous(-1, Int) },
		"nil datatype":            func() (*Datatype, error) { return Contiguous(1, nil) },
		"negative blocklength":    func() (*Datatype, error) { return Vector(2, -1, 1, Int) },
		"2 block lengths but 1":   func() (*Datatype, error) { return Indexed([]int64{1, 2}, []int64{0}, Int) },
		"block 1: negative count": func() (*Datatype, error) { return HIndexed([]int64{1, -2}, []int64{0, 8}, Int) },
		"2 block lengths, 2 displacements and 1 types": func() (*Datatype, error) {
			return Struct([]int64{1, 1}, []int64{0, 8}, []*Datatype{Int})
		},
		"member 1: nil datatype": func() (*Datatype, error) {
			return Struct([]int64{1, 1}, []int64{0, 8}, []*Datatype{Int, nil})
		},
		"negative extent":    func() (*Datatype, error) { return Resized(0, -8, Int) },
		"overflow int64":     func() (*Datatype, error) { return HVector(3, 1, 1<<62, big) },
		"more than 2^64":     func() (*Datatype, error) { return Contiguous(1<<40, big) },
		"deeper than":        func() (*Datatype, error) { return deep(MaxDepth + 1) },
		"overflow int64 (2)": func() (*Datatype, error) { return Vector(1<<62, 1, 1<<62, Double) },
	}
	for want, fn := range cases {
		want = strings.TrimSuffix(want, " (2)")
		_, err := fn()
		if !errors.Is(err, ErrDatatype) || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error about %q, got %v", want, err)
		}
	}
	if _, err := deep(MaxDepth); err != nil {
		t.Errorf("depth %d refused: %v", MaxDepth, err)
	}
}

func deep(n int) (*Datatype, error) {
	t := Int
	for range n {
		var err error
		if t, err = Contiguous(1, t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func TestParseErrors(t *testing.T) {
	cases := map[string]string{
		"":                                      "column 1: expected a datatype, found the end",
		"flaot":                                 `column 1: unknown datatype "flaot"`,
		"vector(1e9 3, 5, double)":              `column 12: expected ',' after count`,
		"vector(1, 2, 3)":                       `column 15: expected ',' after stride, found ")"`,
		"contiguous(4, int":                     "expected ')' after the arguments of contiguous, found the end",
		"contiguous(-4, int)":                   "count must not be negative",
		"contiguous(99999999999999999999, int)": "does not fit in 64 bits",
		"contiguous(1e19, int)":                 "does not fit in 64 bits",
		"contiguous(9e18, int)":                 "column 1: contiguous: sizes or offsets overflow int64",
		"contiguous(1e999, int)":                "bad exponent",
		"struct([1, 1], [0], [int, int])":       "2 block lengths, 1 displacements and 2 types",
		"indexed([1, 2], [0, 4] int)":           "expected ',' after the displacements",
		"indexed([1 2], [0, 4], int)":           "expected ',' after item 0 of block lengths",
		"foo(1, int)":                           `unknown constructor "foo"`,
		"vector":                                "expected '(' after vector",
		"int int":                               `unexpected "int" after the datatype`,
		"resized(0, -1, int)":                   "extent must not be negative",
		"hvector(2, 1, 9223372036854775807, contiguous(2, int))":               "overflow",
		strings.Repeat("contiguous(1, ", 70) + "int" + strings.Repeat(")", 70): "nested deeper than 64",
	}
	for in, want := range cases {
		_, err := ParseDatatype(in)
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, ErrDatatype) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDatatype(%q) = %v, want an error containing %q", in, err, want)
		}
	}
	for _, ok := range []string{"MPI_INT", "Double", " vector ( 1_000 , 3 , -5 , MPI_Type_contiguous(2, char) ) ",
		"mpi_type_create_struct([1],[0],[int])", "2int", "c_complex", "unsigned_int", "indexed([], [], int)"} {
		if _, err := ParseDatatype(ok); err != nil {
			t.Errorf("ParseDatatype(%q): %v", ok, err)
		}
	}
	if _, err := ParseDatatype(strings.Repeat(" ", MaxTextSize+1)); err == nil {
		t.Error("oversized input accepted")
	}
}

func TestPredefined(t *testing.T) {
	names := PredefinedNames()
	if len(names) != 54 {
		t.Fatalf("%d predefined names", len(names))
	}
	for _, n := range names {
		dt, ok := Predefined("MPI_" + strings.ToUpper(n))
		if !ok || dt.Name() != n || dt.String() != n {
			t.Errorf("Predefined(MPI_%s) = %v, %v", strings.ToUpper(n), dt, ok)
		}
	}
	if _, ok := Predefined("quad"); ok {
		t.Error("unknown name found")
	}
	if !Int.IsBasic() || FloatInt.IsBasic() || FloatInt.Elements() != 2 || Int.Code() == 0 || FloatInt.Code() != 0 {
		t.Error("basic/derived predefined types mixed up")
	}
}

func TestFromGo(t *testing.T) {
	type point struct {
		X, Y float64
		Tag  int32
		_    [4]byte
		Ok   bool
		Mass [3]float32
	}
	dt, err := FromValue(point{})
	if err != nil {
		t.Fatal(err)
	}
	want := "resized(0, 40, struct([1, 1, 1, 1, 1], [0, 8, 16, 24, 28], [double, double, int32_t, c_bool, contiguous(3, float)]))"
	if dt.String() != want {
		t.Errorf("FromGo(point) = %s\nwant          %s", dt, want)
	}
	if dt.Extent() != int64(reflect.TypeFor[point]().Size()) || dt.Elements() != 7 {
		t.Errorf("extent %d elements %d", dt.Extent(), dt.Elements())
	}
	// A slice of Go structs has the same type map as count copies of the datatype.
	ps := make([]point, 3)
	es := expand(dt, 3)
	base := reflect.ValueOf(&ps[0]).Pointer()
	if es[7].disp != int64(reflect.ValueOf(&ps[1].X).Pointer()-base) {
		t.Errorf("second copy starts at %d", es[7].disp)
	}
	for _, bad := range []any{"s", []int{1}, map[int]int{}, struct{ P *int }{}, struct{ F func() }{}} {
		if _, err := FromValue(bad); !errors.Is(err, ErrDatatype) {
			t.Errorf("FromValue(%T): %v", bad, err)
		}
	}
	_, err = FromValue(struct{ Inner struct{ Names []string } }{})
	if err == nil || !strings.Contains(err.Error(), ".Inner.Names") {
		t.Errorf("error does not name the field: %v", err)
	}
	if _, err := FromGo(nil); err == nil {
		t.Error("nil type accepted")
	}
	type celsius float64
	if dt, _ := FromValue([2]celsius{}); dt.String() != "contiguous(2, double)" {
		t.Errorf("named float: %s", dt)
	}
}

// Issue 15: no Go type produced C's int, so a Go receiver never matched a
// C sender's MPI_INT. Tags, As and CNames say which C type a Go value is.
func TestFromGoCTypes(t *testing.T) {
	type particle struct {
		ID   int32 `sig:"int"`
		Pos  [3]float64
		Kind [2]uint16 `sig:"MPI_UNSIGNED_SHORT"`
		Pair [2]int32  `sig:"2int"`
		Skip int64     `sig:"-"`
		Cell [2][2]int32
	}
	dt, err := FromValue(particle{})
	if err != nil {
		t.Fatal(err)
	}
	// Go's offsets: 0, 8, 32, 36, 56 and 72 bytes in all where a float64
	// is aligned to 8 (64-bit platforms), 0, 4, 28, 32, 48 and 64 where
	// to 4 (386, arm).
	var p particle
	want := fmt.Sprintf("resized(0, %d, struct([1, 1, 1, 1, 1], [0, %d, %d, %d, %d], [int, contiguous(3, double), "+
		"contiguous(2, unsigned_short), 2int, contiguous(2, contiguous(2, int32_t))]))",
		unsafe.Sizeof(p), unsafe.Offsetof(p.Pos), unsafe.Offsetof(p.Kind), unsafe.Offsetof(p.Pair), unsafe.Offsetof(p.Cell))
	if dt.String() != want {
		t.Errorf("tags: %s\nwant  %s", dt, want)
	}
	dt, err = FromValue(particle{}, As(reflect.TypeFor[int32](), Int))
	if err != nil || !strings.Contains(dt.String(), "contiguous(2, contiguous(2, int))") {
		t.Errorf("As: %v %v", dt, err)
	}
	type all struct {
		A int8
		B uint8
		C int16
		D uint16
		E int32
		F uint32
		G int64
		H uint64
		I int
		J uint
		K float32
		L float64
		M bool
	}
	dt, err = FromValue(all{}, CNames())
	want = "[signed_char, unsigned_char, short, unsigned_short, int, unsigned, long, unsigned_long, long, unsigned_long, float, double, c_bool]"
	if strconv.IntSize == 32 { // C's long is LP64's: Go's 32-bit int and uint keep their fixed-size names
		want = strings.Replace(want, "long, unsigned_long, long, unsigned_long", "long, unsigned_long, int32_t, uint32_t", 1)
	}
	if err != nil || !strings.Contains(dt.String(), want) {
		t.Errorf("CNames: %v %v", dt, err)
	}
	// As wins over CNames; a tag over both.
	dt, _ = FromValue(struct {
		X int64
		Y int64 `sig:"long_long"`
	}{}, CNames(), As(reflect.TypeFor[int64](), Int64))
	if !strings.Contains(dt.String(), "[int64_t, long_long]") {
		t.Errorf("precedence: %s", dt)
	}
	for _, c := range []struct {
		v    any
		opts []GoOption
		msg  string
	}{
		{struct {
			X int32 `sig:"double"`
		}{}, nil, `Go type struct { X int32 "sig:\"double\"" }.X (4 bytes): tag sig:"double" maps it to double, of size 8`},
		{struct {
			X [3]int32 `sig:"nit"`
		}{}, nil, `tag sig:"nit": column 1: unknown datatype "nit"`},
		{struct {
			X [3]int32 `sig:"contiguous(2, int)"`
		}{}, nil, "maps it to contiguous(2, int)"},
		{int32(0), []GoOption{As(reflect.TypeFor[int32](), Double)}, "As maps it to double"},
		{int32(0), []GoOption{As(reflect.TypeFor[int32](), nil)}, "maps it to no datatype"},
	} {
		_, err := FromValue(c.v, c.opts...)
		if !errors.Is(err, ErrDatatype) || !strings.Contains(err.Error(), c.msg) || strings.Count(err.Error(), "sig: ") != 1 {
			t.Errorf("FromValue(%T): %v, want an error about %q", c.v, err, c.msg)
		}
	}
}
