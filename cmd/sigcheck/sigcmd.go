package main

import (
	"encoding/json"
	"errors"
	"fmt"
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
		"description in microseconds however many elements it has.\n\n"+typeSyntax)
	spec := fs.String("alg", sig.DefaultSpec, "signature `algebra`: gfd:w=W,m=M, xor-bs1:w=W,m=M, mmm-bs1:w=W,m=M, "+strings.Join(sig.CRCNames(), ", "))
	count := fs.Uint64("count", 1, "number of copies of TYPE")
	asJSON := fs.Bool("json", false, "print one JSON object")
	runs := fs.Int("map", 8, "show the type map, up to this many runs (0: none)")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	alg, err := sig.ParseAlgebra(*spec)
	if err != nil {
		return err
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
		fmt.Fprintf(e.stdout, "match (%s): the message's %d elements (%d bytes) fit the receive side\n", rule, st.Sig.Count, st.Bytes)
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
		fmt.Fprintf(w, "mismatch (%s): the message has %d bytes, the receive side %d; byte and packed data are matched by size\n",
			m.Rule, m.SendBytes, m.RecvBytes)
		return
	case m.Index < 0:
		fmt.Fprintln(w, "mismatch:", strings.TrimPrefix(m.Error(), "sig: "))
		return
	}
	fmt.Fprintf(w, "mismatch (%s) at element %d (zero-based)", m.Rule, m.Index)
	if m.Truncated {
		fmt.Fprintf(w, ": the message has %d elements, the receive side only %d", m.SendElems, m.RecvElems)
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
