package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sigcheck/sigcheck/sig"
)

const typeSyntax = `TYPE is a predefined name (int, double, MPI_FLOAT_INT, …; see sigcheck types)
or a constructor, as MPI's:
  contiguous(COUNT, TYPE)
  vector(COUNT, BLOCKLEN, STRIDE, TYPE)          stride in extents of TYPE
  hvector(COUNT, BLOCKLEN, STRIDE, TYPE)         stride in bytes
  indexed([BLOCKLEN, …], [DISPL, …], TYPE)       displacements in extents
  hindexed([BLOCKLEN, …], [DISPL, …], TYPE)      displacements in bytes
  indexed_block(BLOCKLEN, [DISPL, …], TYPE)
  hindexed_block(BLOCKLEN, [DISPL, …], TYPE)
  struct([BLOCKLEN, …], [DISPL, …], [TYPE, …])   displacements in bytes
  resized(LB, EXTENT, TYPE)
Numbers may be written 1e9 or 1_000_000.`

func runSig(e *env, args []string) error {
	fs := flags(e, "sig", "Prints the signature of COUNT copies of TYPE: the value (hex, as many digits\n"+
		"as the algebra has bits) and the number of elements, computed from the\n"+
		"description in microseconds however many elements it has. With -list, it lists\n"+
		"the algebras instead: what each detects, and which runs it forgets.\n\n"+typeSyntax)
	spec := fs.String("alg", sig.DefaultSpec, "signature `algebra`: gfd:w=W,m=M, xor-bs1:w=W,m=M, mmm-bs1:w=W,m=M, "+strings.Join(sig.CRCNames(), ", "))
	count := fs.Uint64("count", 1, "number of copies of TYPE")
	asJSON := fs.Bool("json", false, "print one JSON object")
	runs := fs.Int("map", 8, "show the type map, up to this many runs (0: none)")
	list := fs.Bool("list", false, "list the algebras, what each detects and which runs vanish in it (no TYPE)")
	want := 1
	if hasFlag(args, "list") {
		want = -1 // any: the error below says what -list takes
	}
	pos, err := parse(fs, args, want)
	if err != nil {
		return err
	}
	if *list && len(pos) > 0 {
		return usageErrorf("-list lists the algebras and takes no TYPE; got %q", pos)
	}
	alg, err := sig.ParseAlgebra(*spec)
	if err != nil {
		return err
	}
	if *list {
		return listAlgebras(e, alg, *asJSON)
	}
	dt, err := sig.ParseDatatype(pos[0])
	if err != nil {
		return err
	}
	s, err := sig.Of(alg, dt, *count)
	if err != nil {
		return err
	}
	st, err := sig.NewStamp(alg, dt, *count)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]any{
			"algebra": alg.String(), "datatype": dt.String(), "count": *count,
			"value": "0x" + hexValue(s.Value, alg.Bits()), "elements": s.Count,
			"bytes": st.Bytes, "extent": dt.Extent(), "class": st.Class.String(),
		})
	}
	rows := [][]string{
		{"algebra", alg.String()},
		{"datatype", fmt.Sprintf("%s × %d", dt, *count)},
		{"signature", "0x" + hexValue(s.Value, alg.Bits())},
		{"elements", fmt.Sprint(s.Count)},
		{"bytes", fmt.Sprint(st.Bytes)},
		{"extent", fmt.Sprint(dt.Extent())},
	}
	if st.Class != sig.Typed {
		rows = append(rows, []string{"matching", fmt.Sprintf("by size (%s data)", st.Class)})
	}
	if *runs > 0 {
		rows = append(rows, []string{"type map", sig.TypeMap(dt, *count, 0, ^uint64(0), *runs)})
	}
	table(e.stdout, rows, nil)
	return nil
}

func runMatch(e *env, args []string) error {
	fs := flags(e, "match", "Checks that sending SEND-COUNT copies of SEND into RECV-COUNT copies of RECV\n"+
		"is correct by MPI's rules: the sender's type signature must be a prefix of the\n"+
		"receiver's (point-to-point) or equal to it (-collective); byte and packed data are\n"+
		"matched by size. On a mismatch it prints the first element that differs (zero-based),\n"+
		"the two basic types and where they sit in each datatype, and exits with status 1.\n\n"+typeSyntax)
	spec := fs.String("alg", sig.DefaultSpec, "signature `algebra` that decides the match")
	sc := fs.Uint64("send-count", 1, "copies of SEND")
	rc := fs.Uint64("recv-count", 1, "copies of RECV")
	coll := fs.Bool("collective", false, "use the collective rule: signatures must be equal")
	asJSON := fs.Bool("json", false, "print one JSON object")
	pos, err := parse(fs, args, 2)
	if err != nil {
		return err
	}
	alg, err := sig.ParseAlgebra(*spec)
	if err != nil {
		return err
	}
	send, err := sig.ParseDatatype(pos[0])
	if err != nil {
		return fmt.Errorf("SEND: %w", err)
	}
	recv, err := sig.ParseDatatype(pos[1])
	if err != nil {
		return fmt.Errorf("RECV: %w", err)
	}
	rule := sig.PointToPoint
	if *coll {
		rule = sig.Collective
	}
	err = sig.Match(alg, send, *sc, recv, *rc, rule)
	var m *sig.MismatchError
	if err != nil && !errors.As(err, &m) {
		return err
	}
	if *asJSON {
		out := map[string]any{"match": m == nil, "rule": rule.String(), "algebra": alg.String()}
		if m != nil {
			out["index"] = m.Index
			out["truncated"] = m.Truncated
			out["by_size"] = m.BySize
			out["send_elements"], out["recv_elements"] = m.SendElems, m.RecvElems
			out["send_bytes"], out["recv_bytes"] = m.SendBytes, m.RecvBytes
			if m.Index >= 0 {
				out["send_type"], out["recv_type"] = typeName(m.Send), typeName(m.Recv)
				out["send_path"], out["recv_path"] = m.Send.Path.String(), m.Recv.Path.String()
				out["message"] = m.Error()
			}
		}
		if err := json.NewEncoder(e.stdout).Encode(out); err != nil {
			return err
		}
		if m != nil {
			return negativeError{}
		}
		return nil
	}
	if m == nil {
		st, _ := sig.NewStamp(alg, send, *sc)
		fmt.Fprintf(e.stdout, "match (%s): the message (%s, %s) fits the receive side\n", rule,
			quantity(st.Sig.Count, "element"), quantity(st.Bytes, "byte"))
		return nil
	}
	printMismatch(e, m)
	return negativeError{}
}

func typeName(el sig.Element) string {
	if el.Type == nil {
		return ""
	}
	return el.Type.Name()
}

func printMismatch(e *env, m *sig.MismatchError) {
	w := e.stdout
	switch {
	case m.BySize:
		fmt.Fprintf(w, "mismatch (%s): the message has %s, the receive side %d; byte and packed data are matched by size\n",
			m.Rule, quantity(m.SendBytes, "byte"), m.RecvBytes)
		return
	case m.Index < 0:
		fmt.Fprintln(w, "mismatch:", strings.TrimPrefix(m.Error(), "sig: "))
		return
	}
	fmt.Fprintf(w, "mismatch (%s) at element %d (zero-based)", m.Rule, m.Index)
	if m.Truncated {
		fmt.Fprintf(w, ": the message has %s, the receive side only %d", quantity(m.SendElems, "element"), m.RecvElems)
	}
	fmt.Fprintln(w)
	side := func(el sig.Element) []string {
		if el.Type == nil {
			return []string{"(none: this side ends before it)", ""}
		}
		return []string{el.Type.Name(), fmt.Sprintf("at %s, byte %d", el.Path, el.Disp)}
	}
	s, r := side(m.Send), side(m.Recv)
	table(w, [][]string{
		{"  sender", s[0], s[1]},
		{"  receiver", r[0], r[1]},
	}, nil)
	fmt.Fprintln(w, "  sender type map:  ", m.SendMap)
	fmt.Fprintln(w, "  receiver type map:", m.RecvMap)
}

func runTypes(e *env, args []string) error {
	fs := flags(e, "types", "Lists the predefined datatypes with their sizes and codes, and the syntax of TYPE.")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	rows := [][]string{{"name", "elements", "size", "extent", "code"}}
	for _, n := range sig.PredefinedNames() {
		t, _ := sig.Predefined(n)
		code := "(derived)"
		if t.IsBasic() {
			code = fmt.Sprintf("%016x", t.Code())
		}
		rows = append(rows, []string{n, fmt.Sprint(t.Elements()), fmt.Sprint(t.Size()), fmt.Sprint(t.Extent()), code})
	}
	table(e.stdout, rows, map[int]bool{1: true, 2: true, 3: true})
	fmt.Fprintln(e.stdout)
	fmt.Fprintln(e.stdout, typeSyntax)
	return nil
}

// listSpecs are the algebras sig -list describes: the default, the gfd
// widths people pick, every CRC, and the two kept to compare.
var listSpecs = append(append([]string{sig.DefaultSpec, "gfd:w=16,m=4", "gfd:w=32,m=2", "gfd:w=16,m=2", "gfd:w=8,m=2"},
	sig.CRCNames()...), "xor-bs1:w=16,m=1", "mmm-bs1:w=16,m=1")

// listAlgebras prints what each algebra detects and which runs vanish in
// it; extra, when -alg named another, comes first.
func listAlgebras(e *env, extra sig.Algebra, asJSON bool) error {
	var algs []sig.Algebra
	if !slices.Contains(listSpecs, extra.String()) {
		algs = append(algs, extra)
	}
	for _, s := range listSpecs {
		a, err := sig.ParseAlgebra(s)
		if err != nil {
			return err
		}
		algs = append(algs, a)
	}
	vanish := func(d sig.Description) string {
		if d.VanishingRun == 0 {
			return "none below 2^63 elements"
		}
		return fmt.Sprintf("every multiple of %d: %d ints hash as %d floats", d.VanishingRun, d.VanishingRun, d.VanishingRun)
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		for _, a := range algs {
			d := sig.Describe(a)
			if err := enc.Encode(map[string]any{
				"algebra": d.Algebra, "bits": d.Bits, "default": d.Algebra == sig.DefaultSpec,
				"cost": d.Cost, "detects": d.Guarantee, "vanishing_run": d.VanishingRun,
			}); err != nil {
				return err
			}
		}
		return nil
	}
	rows := [][]string{{"algebra", "bits", "concat / repeat", "runs that vanish", "detects"}}
	for _, a := range algs {
		d := sig.Describe(a)
		name := d.Algebra
		if name == sig.DefaultSpec {
			name += " (default)"
		}
		rows = append(rows, []string{name, fmt.Sprint(d.Bits), d.Cost, vanish(d), d.Guarantee})
	}
	table(e.stdout, rows, map[int]bool{1: true})
	fmt.Fprintf(e.stdout, "\nA run vanishes when k copies of one basic type hash as k copies of any other.\n"+
		"Specs: gfd:w=W,m=M with %d ≤ W ≤ 32 and W·M ≤ 64, or W = 64, M = 1; xor-bs1 and mmm-bs1:w=W,m=M\n"+
		"with %d ≤ W ≤ 64, W·M ≤ 64, M < W; the CRCs also by their catalogue names (crc-32/iscsi).\n", sig.MinWidth, sig.MinWidth)
	return nil
}

// hasFlag says whether args set the boolean flag name (-name, --name,
// -name=true), so that the number of arguments wanted can follow it.
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name || a == name+"=true" || a == name+"=1" {
			return true
		}
	}
	return false
}

// quantity returns "1 element", "2 elements".
func quantity(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
