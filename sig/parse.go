package sig

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The text form of a datatype, which String writes and ParseDatatype reads:
//
//	type := NAME                               a predefined type: int, double, MPI_FLOAT_INT, …
//	      | contiguous(COUNT, type)
//	      | vector(COUNT, BLOCKLEN, STRIDE, type)        stride in extents of type
//	      | hvector(COUNT, BLOCKLEN, STRIDE, type)       stride in bytes
//	      | indexed([BLOCKLEN, …], [DISPL, …], type)     displacements in extents
//	      | hindexed([BLOCKLEN, …], [DISPL, …], type)    displacements in bytes
//	      | indexed_block(BLOCKLEN, [DISPL, …], type)
//	      | hindexed_block(BLOCKLEN, [DISPL, …], type)
//	      | struct([BLOCKLEN, …], [DISPL, …], [type, …]) displacements in bytes
//	      | resized(LB, EXTENT, type)
//
// Numbers are decimal integers, optionally signed, with optional _
// separators and an optional exponent: 1e9, 1_000_000, -8. Names and
// constructors are case-insensitive and may carry the MPI_ or MPI_Type_
// prefix. Spaces are ignored.

// ParseError says where in the text a datatype failed to parse.
type ParseError struct {
	Input  string
	Column int // 1-based, in bytes
	Msg    string
}

func (e *ParseError) Error() string {
	in := e.Input
	if len(in) > 80 {
		in = in[:77] + "..."
	}
	return fmt.Sprintf("sig: column %d: %s (in %q)", e.Column, e.Msg, in)
}

func (e *ParseError) Unwrap() error { return ErrDatatype }

// MaxTextSize bounds the input of ParseDatatype.
const MaxTextSize = 1 << 20

// ParseDatatype reads the text form of a datatype.
func ParseDatatype(s string) (*Datatype, error) {
	if len(s) > MaxTextSize {
		return nil, &ParseError{Input: s, Column: MaxTextSize + 1, Msg: fmt.Sprintf("longer than %d bytes", MaxTextSize)}
	}
	p := &parser{in: s}
	t := p.typ(0)
	if p.err == nil {
		p.space()
		if p.pos < len(p.in) {
			p.fail("unexpected %q after the datatype", p.rest())
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	return t, nil
}

type parser struct {
	in  string
	pos int
	err error
}

func (p *parser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = &ParseError{Input: p.in, Column: p.pos + 1, Msg: fmt.Sprintf(format, args...)}
	}
}

func (p *parser) rest() string {
	r := p.in[p.pos:]
	if len(r) > 12 {
		r = r[:12] + "…"
	}
	return r
}

func (p *parser) space() {
	for p.pos < len(p.in) && strings.IndexByte(" \t\r\n", p.in[p.pos]) >= 0 {
		p.pos++
	}
}

// expect consumes c or fails with "expected c after what".
func (p *parser) expect(c byte, what string) bool {
	if p.err != nil {
		return false
	}
	p.space()
	if p.pos >= len(p.in) {
		p.fail("expected %q after %s, found the end", c, what)
		return false
	}
	if p.in[p.pos] != c {
		p.fail("expected %q after %s, found %q", c, what, p.rest())
		return false
	}
	p.pos++
	return true
}

func (p *parser) ident() string {
	p.space()
	start := p.pos
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			p.pos++
			continue
		}
		break
	}
	return p.in[start:p.pos]
}

// number reads an integer with optional sign, underscores and exponent.
func (p *parser) number(what string, nonNegative bool) int64 {
	if p.err != nil {
		return 0
	}
	p.space()
	start := p.pos
	if p.pos < len(p.in) && (p.in[p.pos] == '-' || p.in[p.pos] == '+') {
		p.pos++
	}
	for p.pos < len(p.in) && (p.in[p.pos] >= '0' && p.in[p.pos] <= '9' || p.in[p.pos] == '_') {
		p.pos++
	}
	mant := strings.ReplaceAll(p.in[start:p.pos], "_", "")
	exp := 0
	if p.pos < len(p.in) && (p.in[p.pos] == 'e' || p.in[p.pos] == 'E') {
		p.pos++
		es := p.pos
		for p.pos < len(p.in) && p.in[p.pos] >= '0' && p.in[p.pos] <= '9' {
			p.pos++
		}
		e, err := strconv.Atoi(p.in[es:p.pos])
		if err != nil || e > 99 {
			p.pos = es
			p.fail("bad exponent in %s", what)
			return 0
		}
		exp = e
	}
	v, err := strconv.ParseInt(mant, 10, 64)
	if err != nil {
		p.pos = start
		if mant == "" || mant == "-" || mant == "+" {
			p.fail("expected a number for %s, found %q", what, p.rest())
		} else {
			p.fail("%s %q does not fit in 64 bits", what, mant)
		}
		return 0
	}
	for range exp {
		if v > math.MaxInt64/10 || v < math.MinInt64/10 {
			p.pos = start
			p.fail("%s does not fit in 64 bits", what)
			return 0
		}
		v *= 10
	}
	if nonNegative && v < 0 {
		p.pos = start
		p.fail("%s must not be negative, got %d", what, v)
		return 0
	}
	return v
}

// list reads "[" item ("," item)* "]" (possibly empty).
func (p *parser) list(what string, item func(i int)) {
	if !p.expect('[', "the opening of "+what) {
		return
	}
	p.space()
	if p.pos < len(p.in) && p.in[p.pos] == ']' {
		p.pos++
		return
	}
	for i := 0; p.err == nil; i++ {
		item(i)
		p.space()
		if p.pos < len(p.in) && p.in[p.pos] == ']' {
			p.pos++
			return
		}
		p.expect(',', fmt.Sprintf("item %d of %s", i, what))
	}
}

func (p *parser) numbers(what string, nonNegative bool) []int64 {
	var out []int64
	p.list(what, func(i int) { out = append(out, p.number(fmt.Sprintf("%s[%d]", what, i), nonNegative)) })
	return out
}

func canonicalName(s string) string {
	s = strings.ToLower(s)
	s = strings.TrimPrefix(s, "mpi_type_create_")
	s = strings.TrimPrefix(s, "mpi_type_")
	s = strings.TrimPrefix(s, "mpi_")
	return s
}

func (p *parser) typ(depth int) *Datatype {
	if p.err != nil {
		return nil
	}
	if depth > MaxDepth {
		p.fail("nested deeper than %d", MaxDepth)
		return nil
	}
	start := p.pos
	word := p.ident()
	if word == "" {
		if p.pos >= len(p.in) {
			p.fail("expected a datatype, found the end")
		} else {
			p.fail("expected a datatype, found %q", p.rest())
		}
		return nil
	}
	name := canonicalName(word)
	p.space()
	if p.pos >= len(p.in) || p.in[p.pos] != '(' {
		if t, ok := predefined[name]; ok {
			return t
		}
		p.pos = start
		p.space()
		if _, ctor := constructors[name]; ctor {
			p.pos += len(word)
			p.fail("expected '(' after %s", word)
		} else {
			p.fail("unknown datatype %q", word)
		}
		return nil
	}
	ctor, ok := constructors[name]
	if !ok {
		p.pos = start
		p.space()
		p.fail("unknown constructor %q", word)
		return nil
	}
	p.pos++ // '('
	a := p.parseArgs(ctor, depth)
	p.expect(')', "the arguments of "+name)
	if p.err != nil {
		return nil
	}
	t, err := ctor.build(a)
	if err != nil {
		p.pos = start
		p.space()
		p.fail("%s", strings.TrimPrefix(err.Error(), ErrDatatype.Error()+": "))
		return nil
	}
	return t
}

// A constructor's arguments, in order: each is a number, a list of
// numbers, a datatype or a list of datatypes; names are what the error
// messages call them.
type argKind uint8

const (
	argInt    argKind = iota // any integer
	argCount                 // a non-negative integer
	argInts                  // [integers]
	argCounts                // [non-negative integers]
	argType                  // a datatype
	argTypes                 // [datatypes]
)

type arg struct {
	kind argKind
	name string
}

// args holds what was parsed, by kind, in order.
type args struct {
	n     []int64
	lists [][]int64
	t     *Datatype
	ts    []*Datatype
}

type constructor struct {
	args  []arg
	build func(a *args) (*Datatype, error)
}

var (
	aCount, aBlocklen = arg{argCount, "count"}, arg{argCount, "block length"}
	aBlocklens        = arg{argCounts, "the block lengths"}
	aDispls           = arg{argInts, "the displacements"}
	aOld              = arg{argType, "the datatype"}
)

var constructors = map[string]constructor{
	"contiguous": {[]arg{aCount, aOld}, func(a *args) (*Datatype, error) { return Contiguous(a.n[0], a.t) }},
	"vector": {[]arg{aCount, aBlocklen, {argInt, "stride"}, aOld},
		func(a *args) (*Datatype, error) { return Vector(a.n[0], a.n[1], a.n[2], a.t) }},
	"hvector": {[]arg{aCount, aBlocklen, {argInt, "stride"}, aOld},
		func(a *args) (*Datatype, error) { return HVector(a.n[0], a.n[1], a.n[2], a.t) }},
	"indexed": {[]arg{aBlocklens, aDispls, aOld},
		func(a *args) (*Datatype, error) { return Indexed(a.lists[0], a.lists[1], a.t) }},
	"hindexed": {[]arg{aBlocklens, aDispls, aOld},
		func(a *args) (*Datatype, error) { return HIndexed(a.lists[0], a.lists[1], a.t) }},
	"indexed_block": {[]arg{aBlocklen, aDispls, aOld},
		func(a *args) (*Datatype, error) { return IndexedBlock(a.n[0], a.lists[0], a.t) }},
	"hindexed_block": {[]arg{aBlocklen, aDispls, aOld},
		func(a *args) (*Datatype, error) { return HIndexedBlock(a.n[0], a.lists[0], a.t) }},
	"struct": {[]arg{aBlocklens, aDispls, {argTypes, "the types"}},
		func(a *args) (*Datatype, error) { return Struct(a.lists[0], a.lists[1], a.ts) }},
	"resized": {[]arg{{argInt, "lower bound"}, {argCount, "extent"}, aOld},
		func(a *args) (*Datatype, error) { return Resized(a.n[0], a.n[1], a.t) }},
}

// parseArgs reads the comma-separated arguments of c.
func (p *parser) parseArgs(c constructor, depth int) *args {
	a := &args{}
	for i, spec := range c.args {
		if i > 0 {
			p.expect(',', c.args[i-1].name)
		}
		if p.err != nil {
			return nil
		}
		switch spec.kind {
		case argInt, argCount:
			a.n = append(a.n, p.number(spec.name, spec.kind == argCount))
		case argInts, argCounts:
			a.lists = append(a.lists, p.numbers(strings.TrimPrefix(spec.name, "the "), spec.kind == argCounts))
		case argType:
			a.t = p.typ(depth + 1)
		case argTypes:
			p.list("types", func(int) { a.ts = append(a.ts, p.typ(depth+1)) })
		}
	}
	if p.err != nil {
		return nil
	}
	return a
}

// String returns the text form of t, which ParseDatatype reads back to an
// equal datatype. Shared subtypes are written out at each use.
func (t *Datatype) String() string {
	var b strings.Builder
	t.format(&b)
	return b.String()
}

func (t *Datatype) format(b *strings.Builder) {
	if t.name != "" {
		b.WriteString(t.name)
		return
	}
	b.WriteString(t.kind.String())
	b.WriteByte('(')
	switch t.kind {
	case kindContiguous:
		fmt.Fprintf(b, "%d, ", t.count)
	case kindVector, kindHVector:
		fmt.Fprintf(b, "%d, %d, %d, ", t.count, t.blocklen, t.stride)
	case kindIndexed, kindHIndexed:
		writeInts(b, t.blocklens)
		b.WriteString(", ")
		writeInts(b, t.displs)
		b.WriteString(", ")
	case kindIndexedBlock, kindHIndexedBlock:
		fmt.Fprintf(b, "%d, ", t.blocklen)
		writeInts(b, t.displs)
		b.WriteString(", ")
	case kindStruct:
		writeInts(b, t.blocklens)
		b.WriteString(", ")
		writeInts(b, t.displs)
		b.WriteString(", [")
		for i, m := range t.types {
			if i > 0 {
				b.WriteString(", ")
			}
			m.format(b)
		}
		b.WriteString("])")
		return
	case kindResized:
		fmt.Fprintf(b, "%d, %d, ", t.lb, t.Extent())
	}
	t.old.format(b)
	b.WriteByte(')')
}

func writeInts(b *strings.Builder, xs []int64) {
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
	b.WriteByte(']')
}
