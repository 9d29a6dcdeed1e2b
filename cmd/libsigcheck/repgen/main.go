// Repgen writes libsigcheck's virt.c from virt.list: the wrappers that
// translate the application's MPI_COMM_WORLD into its replica's world for
// every MPI function that takes a communicator and that the library does
// not wrap by hand, and the Fortran entry points of the calls among them
// that Fortran programs make, as LLNL's wrap.py makes many wrappers from
// one template per call. Run it in cmd/libsigcheck after changing the
// list:
//
//	go run ./repgen
//
// Its test holds the list to the installed mpi.h and virt.c to the list.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// An entry is one line of the list.
type entry struct {
	class string // H, T, C, X, F, W or N
	name  string // MPI_X for H, T, C, X; the Fortran name (lower case, no prefix) for F, W, N
	ret   string // T, C: the return type
	args  []arg  // T, C: the parameters; F: the kinds
	why   string // X, N
}

type arg struct{ decl, name string }

var (
	protoRe = regexp.MustCompile(`^(\w+)\s+(MPI_\w+)\s*\((.*)\)$`)
	nameRe  = regexp.MustCompile(`(\w+)\s*(\[\])?$`)
)

// parse reads the list.
func parse(r io.Reader) ([]entry, error) {
	var out []entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		class, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		e := entry{class: class}
		switch class {
		case "H":
			e.name = rest
		case "X":
			e.name, e.why, _ = strings.Cut(rest, " ")
			if e.why == "" {
				return nil, fmt.Errorf("line %d: X %s: say why it is not translated", n, e.name)
			}
		case "T", "C":
			m := protoRe.FindStringSubmatch(rest)
			if m == nil {
				return nil, fmt.Errorf("line %d: %q is not a prototype", n, rest)
			}
			e.ret, e.name = m[1], m[2]
			for _, p := range splitParams(m[3]) {
				pm := nameRe.FindStringSubmatch(p)
				if pm == nil {
					return nil, fmt.Errorf("line %d: parameter %q has no name", n, p)
				}
				e.args = append(e.args, arg{decl: p, name: pm[1]})
			}
		case "F":
			name, kinds, _ := strings.Cut(rest, " ")
			e.name = name
			for _, k := range strings.Split(kinds, ",") {
				if _, ok := fortranKinds[k]; !ok {
					return nil, fmt.Errorf("line %d: %s: unknown argument kind %q", n, name, k)
				}
				e.args = append(e.args, arg{name: k})
			}
		case "W":
			e.name = rest
		case "N":
			e.name, e.why, _ = strings.Cut(rest, " ")
			if e.why == "" {
				return nil, fmt.Errorf("line %d: N %s: say why it has no entry point", n, e.name)
			}
		default:
			return nil, fmt.Errorf("line %d: class %q: want H, T, C, X, F, W or N", n, class)
		}
		if e.name == "" {
			return nil, fmt.Errorf("line %d: no name", n)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// splitParams splits a parameter list at its top-level commas.
func splitParams(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" && t != "void" {
		out = append(out, t)
	}
	return out
}

// isComm says whether a parameter is a communicator passed in.
func isComm(a arg) bool {
	f := strings.Fields(a.decl)
	return len(f) == 2 && f[0] == "MPI_Comm" && !strings.ContainsAny(f[1], "*[")
}

// A Fortran argument kind: its C conversion around the call. In the
// templates %d is the argument's number and %c the communicator's.
type fkind struct {
	param   string // the parameter, if not an INTEGER (sc_vf *a%d)
	local   string // a declaration before the call
	pass    string // the C argument
	after   string // a statement after a successful call
	cleanup string // a statement after the call
}

var fortranKinds = map[string]fkind{
	"comm":      {pass: "PMPI_Comm_f2c(*a%d)"},
	"int":       {pass: "*a%d"},
	"type":      {pass: "PMPI_Type_f2c(*a%d)"},
	"op":        {pass: "PMPI_Op_f2c(*a%d)"},
	"info":      {pass: "PMPI_Info_f2c(*a%d)"},
	"errh":      {pass: "PMPI_Errhandler_f2c(*a%d)"},
	"out":       {pass: "(int *)a%d"},
	"ints":      {pass: "(int *)a%d"},
	"buf":       {param: "void *a%d", pass: "sc_vf_buf(a%d)"},
	"ptr":       {param: "void *a%d", pass: "a%d"},
	"aint":      {param: "MPI_Aint *a%d", pass: "*a%d"},
	"aints":     {param: "MPI_Aint *a%d", pass: "a%d"},
	"weights":   {pass: "sc_vf_weights(a%d)"},
	"types":     {local: "MPI_Datatype *t%d = sc_vf_types(a%d, *a%c, 0);", pass: "t%d", cleanup: "free(t%d);"},
	"stypes":    {local: "MPI_Datatype *t%d = sc_vf_types(a%d, *a%c, 2);", pass: "t%d", cleanup: "free(t%d);"},
	"rtypes":    {local: "MPI_Datatype *t%d = sc_vf_types(a%d, *a%c, 1);", pass: "t%d", cleanup: "free(t%d);"},
	"logical":   {local: "int l%d = 0;", pass: "&l%d", after: "*a%d = l%d ? 1 : 0;"},
	"status":    {local: "MPI_Status s%d;", pass: "a%d == MPI_F_STATUS_IGNORE ? MPI_STATUS_IGNORE : &s%d", after: "if (a%d != MPI_F_STATUS_IGNORE) PMPI_Status_c2f(&s%d, a%d);"},
	"group":     {local: "MPI_Group g%d = MPI_GROUP_NULL;", pass: "&g%d", after: "*a%d = PMPI_Group_c2f(g%d);"},
	"errh_out":  {local: "MPI_Errhandler h%d = MPI_ERRHANDLER_NULL;", pass: "&h%d", after: "*a%d = PMPI_Errhandler_c2f(h%d);"},
	"req":       {local: "MPI_Request q%d = MPI_REQUEST_NULL;", pass: "&q%d", after: "*a%d = PMPI_Request_c2f(q%d);"},
	"req_inout": {local: "MPI_Request q%d = PMPI_Request_f2c(*a%d);", pass: "&q%d", after: "*a%d = PMPI_Request_c2f(q%d);"},
	"comm_out":  {local: "MPI_Comm c%d = MPI_COMM_NULL;", pass: "&c%d", after: "*a%d = PMPI_Comm_c2f(c%d);"},
	"info_out":  {local: "MPI_Info i%d = MPI_INFO_NULL;", pass: "&i%d", after: "*a%d = PMPI_Info_c2f(i%d);"},
	"win_out":   {local: "MPI_Win w%d = MPI_WIN_NULL;", pass: "&w%d", after: "*a%d = PMPI_Win_c2f(w%d);"},
}

// expand fills every %d of a template with n and %c with the
// communicator's number c.
func expand(t string, n, c int) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "%d", fmt.Sprint(n)), "%c", fmt.Sprint(c))
}

// cName is the C function a Fortran entry calls: comm_rank → MPI_Comm_rank.
func cName(lo string) string { return "MPI_" + strings.ToUpper(lo[:1]) + lo[1:] }

const header = `//go:build mpi

// Code generated by repgen from virt.list; DO NOT EDIT.

// The functions that take a communicator and that libsigcheck does not
// wrap by hand: each translates the application's MPI_COMM_WORLD into its
// replica's world (sc_rep_vc, which leaves it alone when replication is
// off) and calls MPI's own. Collectives whose results the replicas do not
// vote on are counted. Then the Fortran entry points of those calls, for
// Open MPI's Fortran bindings call PMPI_ directly: each converts its
// arguments as Open MPI's own do and calls the C function.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "sc.h"
`

// generate writes virt.c for the entries.
func generate(w io.Writer, entries []entry) error {
	var b bytes.Buffer
	b.WriteString(header)
	for _, e := range entries {
		if e.class != "T" && e.class != "C" {
			continue
		}
		decls := make([]string, len(e.args))
		pass := make([]string, len(e.args))
		comm := false
		for i, a := range e.args {
			decls[i] = a.decl
			pass[i] = a.name
			if isComm(a) {
				pass[i] = "sc_rep_vc(" + a.name + ")"
				comm = true
			}
		}
		if !comm && e.class == "C" {
			return fmt.Errorf("%s: a collective with no communicator", e.name)
		}
		fmt.Fprintf(&b, "\n%s %s(%s) {\n", e.ret, e.name, strings.Join(decls, ", "))
		if e.class == "C" {
			b.WriteString("\tif (sc_rep_on && !sc_rep_in) sc_rep_count.uncompared[SC_REP_U_COLL]++;\n")
		}
		fmt.Fprintf(&b, "\treturn P%s(%s);\n}\n", e.name, strings.Join(pass, ", "))
	}
	b.WriteString(`
// Fortran: each entry point under Open MPI's names for it (mpi_x, mpi_x_,
// mpi_x__, MPI_X, and use mpi_f08's mpi_x_f08_), as fortran.c defines its
// own; an f08 handle is one INTEGER and an absent ierror a null pointer.
typedef MPI_Fint sc_vf;

// Open MPI's addresses behind Fortran's MPI_IN_PLACE, MPI_BOTTOM and
// MPI_UNWEIGHTED, as in fortran.c.
extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_bottom_ __attribute__((weak));
extern int mpi_fortran_unweighted_ __attribute__((weak));
extern int mpi_fortran_weights_empty_ __attribute__((weak));

static void *sc_vf_buf(void *p) {
	if (p == (void *)&mpi_fortran_in_place_) return MPI_IN_PLACE;
	if (p == (void *)&mpi_fortran_bottom_) return MPI_BOTTOM;
	return p;
}

static int *sc_vf_weights(sc_vf *w) {
	if (w == &mpi_fortran_unweighted_) return MPI_UNWEIGHTED;
	if (w == &mpi_fortran_weights_empty_) return MPI_WEIGHTS_EMPTY;
	return (int *)w;
}

// sc_vf_types converts a Fortran array of datatypes: one per process of
// the communicator (of its remote group, for an intercommunicator) for
// which 0, or one per neighbour of its topology, its sources for which 1
// and its destinations for 2. Freed by the caller.
static MPI_Datatype *sc_vf_types(const sc_vf *f, sc_vf comm, int which) {
	MPI_Comm c = sc_rep_vc(PMPI_Comm_f2c(comm));
	int n = 0, inter = 0, topo = MPI_UNDEFINED;
	if (which == 0) {
		PMPI_Comm_test_inter(c, &inter);
		if (inter) PMPI_Comm_remote_size(c, &n);
		else PMPI_Comm_size(c, &n);
	} else {
		PMPI_Topo_test(c, &topo);
		if (topo == MPI_CART) {
			PMPI_Cartdim_get(c, &n);
			n *= 2;
		} else if (topo == MPI_GRAPH) {
			int me;
			PMPI_Comm_rank(c, &me);
			PMPI_Graph_neighbors_count(c, me, &n);
		} else if (topo == MPI_DIST_GRAPH) {
			int in = 0, out = 0, w = 0;
			PMPI_Dist_graph_neighbors_count(c, &in, &out, &w);
			n = which == 1 ? in : out;
		}
	}
	MPI_Datatype *t = malloc(sizeof *t * (size_t)(n > 0 ? n : 1));
	if (!t) abort();
	for (int i = 0; i < n; i++) t[i] = PMPI_Type_f2c(f[i]);
	return t;
}

#define VF_ALIAS(name, lo, PARAMS) void name PARAMS __attribute__((alias("sc_vf_" #lo)));
#define VFORTRAN(UP, lo, PARAMS)                \
	static void sc_vf_##lo PARAMS;              \
	VF_ALIAS(mpi_##lo, lo, PARAMS)              \
	VF_ALIAS(mpi_##lo##_, lo, PARAMS)           \
	VF_ALIAS(mpi_##lo##__, lo, PARAMS)          \
	VF_ALIAS(MPI_##UP, lo, PARAMS)              \
	VF_ALIAS(mpi_##lo##_f08_, lo, PARAMS)       \
	static void sc_vf_##lo PARAMS
`)
	b.WriteString(`
// The Fortran bindings that have no entry point (N in virt.list): each of
// their names passes the call on to Open MPI's own, found after this
// library, and counts it as not compared. Their arguments are integers
// and addresses (with CHARACTER lengths by value), so sixteen
// pointer-sized parameters carry any of them.
#define SC_VN_PARAMS void *a0, void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7, \
	void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14, void *a15
#define SC_VN_ARGS a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15
typedef void (*sc_vn_fn)(SC_VN_PARAMS);
#define VNEXT(name)                                                                   \
	void name(SC_VN_PARAMS) {                                                         \
		static sc_vn_fn next;                                                         \
		if (!next) next = (sc_vn_fn)dlsym(RTLD_NEXT, #name);                          \
		if (!next) {                                                                  \
			fprintf(stderr, "sigcheck: %s: no such function after libsigcheck\\n", #name); \
			abort();                                                                  \
		}                                                                             \
		if (sc_rep_on && !sc_rep_in) sc_rep_count.uncompared[SC_REP_U_FORTRAN]++;    \
		next(SC_VN_ARGS);                                                             \
	}
`)
	for _, e := range entries {
		switch e.class {
		case "N":
			up := strings.ToUpper(e.name)
			for _, n := range []string{"mpi_" + e.name, "mpi_" + e.name + "_", "mpi_" + e.name + "__", "MPI_" + up, "mpi_" + e.name + "_f08_"} {
				fmt.Fprintf(&b, "VNEXT(%s)\n", n)
			}
		case "F":
			params := make([]string, 0, len(e.args)+1)
			var locals, pass, after, cleanup []string
			ci := -1
			for i, a := range e.args {
				if a.name == "comm" && ci < 0 {
					ci = i
				}
			}
			for i, a := range e.args {
				k := fortranKinds[a.name]
				if strings.Contains(k.local, "%c") && ci < 0 {
					return fmt.Errorf("F %s: %s needs a comm argument", e.name, a.name)
				}
				param := k.param
				if param == "" {
					param = "sc_vf *a%d"
				}
				params = append(params, expand(param, i, ci))
				if k.local != "" {
					locals = append(locals, expand(k.local, i, ci))
				}
				pass = append(pass, expand(k.pass, i, ci))
				if k.after != "" {
					after = append(after, expand(k.after, i, ci))
				}
				if k.cleanup != "" {
					cleanup = append(cleanup, expand(k.cleanup, i, ci))
				}
			}
			params = append(params, "sc_vf *ierr")
			fmt.Fprintf(&b, "\nVFORTRAN(%s, %s, (%s)) {\n", strings.ToUpper(e.name), e.name, strings.Join(params, ", "))
			for _, l := range locals {
				fmt.Fprintf(&b, "\t%s\n", l)
			}
			fmt.Fprintf(&b, "\tint rc = %s(%s);\n", cName(e.name), strings.Join(pass, ", "))
			if len(after) > 0 {
				b.WriteString("\tif (rc == MPI_SUCCESS) {\n")
				for _, l := range after {
					fmt.Fprintf(&b, "\t\t%s\n", l)
				}
				b.WriteString("\t}\n")
			}
			for _, l := range cleanup {
				fmt.Fprintf(&b, "\t%s\n", l)
			}
			b.WriteString("\tif (ierr) *ierr = (sc_vf)rc;\n}\n")
		case "W":
			up, c := strings.ToUpper(e.name), cName(e.name)
			fmt.Fprintf(&b, "\nstatic double sc_vf_%s(void) { return %s(); }\n", e.name, c)
			for _, n := range []string{"mpi_" + e.name, "mpi_" + e.name + "_", "mpi_" + e.name + "__", "MPI_" + up, c + "_f08"} {
				fmt.Fprintf(&b, "double %s(void) __attribute__((alias(\"sc_vf_%s\")));\n", n, e.name)
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func main() {
	list := flag.String("list", "virt.list", "the signature list")
	out := flag.String("o", "virt.c", "the C file to write")
	flag.Parse()
	f, err := os.Open(*list)
	if err != nil {
		fmt.Fprintln(os.Stderr, "repgen:", err)
		os.Exit(1)
	}
	entries, err := parse(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "repgen: %s: %v\n", *list, err)
		os.Exit(1)
	}
	var b bytes.Buffer
	if err := generate(&b, entries); err != nil {
		fmt.Fprintln(os.Stderr, "repgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "repgen:", err)
		os.Exit(1)
	}
}
