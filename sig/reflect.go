package sig

import (
	"fmt"
	"reflect"
	"strings"
)

// FromGo returns the datatype that describes values of the Go type t in
// memory: the layout a Go program hands to a transport when it sends a
// []T or a *T. Booleans, sized integers, floats and complex numbers map to
// the C99 fixed-size types of MPI (int and uint to int64_t/uint64_t on
// 64-bit platforms, uintptr to uint64_t or uint32_t), arrays to contiguous
// types, and structs to struct types at the fields' offsets, resized to the
// Go size so that slices of them step correctly. Blank (_) fields are
// padding and are left out.
//
// Go has no type that is C's int: cgo's C.int is an int32, which by
// default maps to int32_t, a different MPI type with a different signature.
// A peer written in C that sends MPI_INT needs to be told which Go values
// stand for int, in one of three ways, the first that applies winning:
//
//   - a struct tag on the field, `sig:"int"`, naming any TYPE that
//     ParseDatatype accepts; on an array field a tag whose size is the
//     element's applies to every element (`sig:"int"` on a [3]int32), else
//     it describes the whole field; `sig:"-"` leaves the field out;
//   - As(goType, dt), for every value of that Go type;
//   - CNames(), which maps Go's sized numbers to the C names cgo gives them
//     on an LP64 platform: int32 → int, int64 and int → long, float64 →
//     double, and so on (see CNames).
//
// A mapping whose size differs from the Go type's is an error, as are types
// with no fixed layout in memory — strings, slices, maps, pointers,
// channels, functions, interfaces; each error names the field.
func FromGo(t reflect.Type, opts ...GoOption) (*Datatype, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: nil Go type", ErrDatatype)
	}
	var c goConfig
	for _, o := range opts {
		o(&c)
	}
	return c.fromGo(t, t.String(), 0)
}

// FromValue returns FromGo(reflect.TypeOf(v), opts...).
func FromValue(v any, opts ...GoOption) (*Datatype, error) {
	return FromGo(reflect.TypeOf(v), opts...)
}

// GoOption says how FromGo maps Go types to MPI types.
type GoOption func(*goConfig)

type goConfig struct {
	as     map[reflect.Type]*Datatype
	cNames bool
}

// As maps every value of the Go type t to dt, which must have t's size:
// As(reflect.TypeFor[int32](), sig.Int) reads int32 as C's int. Later
// options override earlier ones for the same type.
func As(t reflect.Type, dt *Datatype) GoOption {
	return func(c *goConfig) {
		if c.as == nil {
			c.as = map[reflect.Type]*Datatype{}
		}
		c.as[t] = dt
	}
}

// CNames maps Go's sized numeric kinds to the C types whose Go names cgo
// gives (C.schar int8, C.uchar uint8, C.short int16, C.ushort uint16,
// C.int int32, C.uint uint32, C.long int64, C.ulong uint64, C.float
// float32, C.double float64) on an LP64 platform: int8 → signed_char,
// uint8 → unsigned_char, int16 → short, uint16 → unsigned_short, int32 →
// int, uint32 → unsigned, int64 and int → long, uint64, uint and uintptr →
// unsigned_long; float32, float64, complex and bool are as without it.
func CNames() GoOption { return func(c *goConfig) { c.cNames = true } }

// cNames is CNames' table, by kind (int, uint and uintptr are 64-bit here;
// on a 32-bit platform FromGo falls back to the fixed-size names).
var cNames = map[reflect.Kind]*Datatype{
	reflect.Int8: SignedChar, reflect.Uint8: UnsignedChar, reflect.Int16: Short, reflect.Uint16: UnsignedShort,
	reflect.Int32: Int, reflect.Uint32: Unsigned, reflect.Int64: Long, reflect.Uint64: UnsignedLong,
	reflect.Int: Long, reflect.Uint: UnsignedLong, reflect.Uintptr: UnsignedLong,
}

func (c *goConfig) fromGo(t reflect.Type, where string, depth int) (*Datatype, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("%w: Go type %s: nested deeper than %d", ErrDatatype, where, MaxDepth)
	}
	if dt, ok := c.as[t]; ok {
		return fits(dt, t, where, "As")
	}
	if dt, ok := cNames[t.Kind()]; ok && c.cNames && uintptr(dt.Size()) == t.Size() {
		return dt, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return CBool, nil
	case reflect.Int8:
		return Int8, nil
	case reflect.Int16:
		return Int16, nil
	case reflect.Int32:
		return Int32, nil
	case reflect.Int64:
		return Int64, nil
	case reflect.Uint8:
		return Uint8, nil
	case reflect.Uint16:
		return Uint16, nil
	case reflect.Uint32:
		return Uint32, nil
	case reflect.Uint64:
		return Uint64, nil
	case reflect.Int:
		return sized(t.Size(), Int32, Int64), nil
	case reflect.Uint, reflect.Uintptr:
		return sized(t.Size(), Uint32, Uint64), nil
	case reflect.Float32:
		return Float, nil
	case reflect.Float64:
		return Double, nil
	case reflect.Complex64:
		return CFloatComplex, nil
	case reflect.Complex128:
		return CDoubleComplex, nil
	case reflect.Array:
		elem, err := c.fromGo(t.Elem(), where+"[]", depth+1)
		if err != nil {
			return nil, err
		}
		return Contiguous(int64(t.Len()), elem)
	case reflect.Struct:
		var bl, ds []int64
		var ts []*Datatype
		for i := range t.NumField() {
			f := t.Field(i)
			tag, tagged := f.Tag.Lookup("sig")
			if f.Name == "_" || f.Type.Size() == 0 || tag == "-" {
				continue
			}
			fw := where + "." + f.Name
			var ft *Datatype
			var err error
			if tagged {
				ft, err = fromTag(tag, f.Type, fw)
			} else {
				ft, err = c.fromGo(f.Type, fw, depth+1)
			}
			if err != nil {
				return nil, err
			}
			bl, ds, ts = append(bl, 1), append(ds, int64(f.Offset)), append(ts, ft)
		}
		s, err := Struct(bl, ds, ts)
		if err != nil {
			return nil, err
		}
		return Resized(0, int64(t.Size()), s)
	}
	return nil, fmt.Errorf("%w: Go type %s: a %s has no fixed layout in memory", ErrDatatype, where, t.Kind())
}

// fromTag returns the datatype a `sig:"TYPE"` tag gives a field of Go type
// t: TYPE for each innermost element of an array when its size is the
// element's, else TYPE for the whole field.
func fromTag(tag string, t reflect.Type, where string) (*Datatype, error) {
	dt, err := ParseDatatype(tag)
	if err != nil {
		return nil, fmt.Errorf("%w: Go type %s: tag sig:%q: %s", ErrDatatype, where, tag, strings.TrimPrefix(err.Error(), "sig: "))
	}
	how := fmt.Sprintf("tag sig:%q", tag)
	if t.Kind() != reflect.Array || dt.Extent() == int64(t.Size()) {
		return fits(dt, t, where, how)
	}
	var lens []int
	for t.Kind() == reflect.Array {
		lens = append(lens, t.Len())
		t = t.Elem()
	}
	out, err := fits(dt, t, where+"[]", how)
	for i := len(lens) - 1; i >= 0 && err == nil; i-- {
		out, err = Contiguous(int64(lens[i]), out)
	}
	return out, err
}

// fits returns dt if it lays out like the Go type t: same size, same extent.
func fits(dt *Datatype, t reflect.Type, where, how string) (*Datatype, error) {
	if dt == nil {
		return nil, fmt.Errorf("%w: Go type %s: %s maps it to no datatype", ErrDatatype, where, how)
	}
	if dt.Size() != int64(t.Size()) || dt.Extent() != int64(t.Size()) {
		return nil, fmt.Errorf("%w: Go type %s (%d bytes): %s maps it to %s, of size %d and extent %d",
			ErrDatatype, where, t.Size(), how, dt, dt.Size(), dt.Extent())
	}
	return dt, nil
}

func sized(size uintptr, small, large *Datatype) *Datatype {
	if size == 4 {
		return small
	}
	return large
}
