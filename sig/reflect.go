package sig

import (
	"fmt"
	"reflect"
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
// Types with no fixed layout in memory — strings, slices, maps, pointers,
// channels, functions, interfaces — are refused with an error that names
// the field.
func FromGo(t reflect.Type) (*Datatype, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: nil Go type", ErrDatatype)
	}
	return fromGo(t, t.String(), 0)
}

// FromValue returns FromGo(reflect.TypeOf(v)).
func FromValue(v any) (*Datatype, error) { return FromGo(reflect.TypeOf(v)) }

func fromGo(t reflect.Type, where string, depth int) (*Datatype, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("%w: Go type %s: nested deeper than %d", ErrDatatype, where, MaxDepth)
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
		elem, err := fromGo(t.Elem(), where+"[]", depth+1)
		if err != nil {
			return nil, err
		}
		return Contiguous(int64(t.Len()), elem)
	case reflect.Struct:
		var bl, ds []int64
		var ts []*Datatype
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Name == "_" || f.Type.Size() == 0 {
				continue
			}
			ft, err := fromGo(f.Type, where+"."+f.Name, depth+1)
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

func sized(size uintptr, small, large *Datatype) *Datatype {
	if size == 4 {
		return small
	}
	return large
}
