package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func readList(t *testing.T) []entry {
	t.Helper()
	f, err := os.Open("../virt.list")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, err := parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// TestVirtUpToDate: virt.c is what the list makes (run go run ./repgen in
// cmd/libsigcheck after changing either).
func TestVirtUpToDate(t *testing.T) {
	var b bytes.Buffer
	if err := generate(&b, readList(t)); err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("../virt.c")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Error("virt.c is not what virt.list makes: run go run ./repgen in cmd/libsigcheck")
	}
}

// mpiFunctions returns the functions the installed mpi.h declares (after
// the preprocessor, so that what Open MPI leaves out is left out), with
// their parameter lists.
func mpiFunctions(t *testing.T) map[string]string {
	t.Helper()
	for _, tool := range []string{"cc", "pkg-config"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: the list is checked against Open MPI's mpi.h where it is installed", tool)
		}
	}
	flags, err := exec.Command("pkg-config", "--cflags", "ompi-c").Output()
	if err != nil {
		t.Skip("pkg-config knows no ompi-c: install libopenmpi-dev to check the list against mpi.h")
	}
	src := filepath.Join(t.TempDir(), "h.c")
	if err := os.WriteFile(src, []byte("#include <mpi.h>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-E"}, strings.Fields(string(flags))...)
	out, err := exec.Command("cc", append(args, src)...).Output()
	if err != nil {
		t.Fatalf("cc -E: %v", err)
	}
	text := regexp.MustCompile(`(?m)^#.*$`).ReplaceAllString(string(out), "")
	text = strings.Join(strings.Fields(text), " ")
	fns := map[string]string{}
	re := regexp.MustCompile(`\b(?:int|double|MPI_\w+) (MPI_\w+) ?\(([^()]*(?:\([^()]*\)[^()]*)*)\)`)
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		if _, ok := fns[m[1]]; !ok {
			fns[m[1]] = m[2]
		}
	}
	if len(fns) < 300 {
		t.Fatalf("found %d MPI functions in mpi.h: the pattern no longer fits it", len(fns))
	}
	return fns
}

// TestListCoversMPIH: every function of mpi.h that takes a communicator is
// in the list; every generated one has mpi.h's parameters; every one
// defined by hand is defined in the library's C files.
func TestListCoversMPIH(t *testing.T) {
	fns := mpiFunctions(t)
	entries := readList(t)
	listed := map[string]entry{}
	for _, e := range entries {
		if e.class == "F" || e.class == "W" || e.class == "N" {
			continue
		}
		if _, dup := listed[e.name]; dup {
			t.Errorf("%s is listed twice", e.name)
		}
		listed[e.name] = e
	}
	comm := regexp.MustCompile(`\bMPI_Comm\b`)
	for name, params := range fns {
		if !comm.MatchString(params) {
			continue
		}
		if _, ok := listed[name]; !ok {
			t.Errorf("%s takes a communicator and is not in virt.list: add it (T, C, H or X)", name)
		}
	}
	sources, _ := filepath.Glob("../*.c")
	var code bytes.Buffer
	for _, p := range sources {
		if filepath.Base(p) == "virt.c" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		code.Write(b)
	}
	space := regexp.MustCompile(`\s+`)
	for name, e := range listed {
		params, ok := fns[name]
		switch {
		case !ok:
			t.Errorf("%s is listed but mpi.h does not declare it", name)
		case e.class == "T" || e.class == "C":
			var decls []string
			for _, a := range e.args {
				decls = append(decls, a.decl)
			}
			if space.ReplaceAllString(strings.Join(decls, ", "), " ") != space.ReplaceAllString(params, " ") {
				t.Errorf("%s: the list says (%s), mpi.h (%s)", name, strings.Join(decls, ", "), params)
			}
		case e.class == "H":
			def := regexp.MustCompile(`(?m)^(?:int|double) ` + name + `\(|\(` + name + `, `)
			if !def.Match(code.Bytes()) {
				t.Errorf("%s is listed as defined by hand, and no C file of the library defines it", name)
			}
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, bad := range []string{
		"Q MPI_Foo",
		"X MPI_Comm_c2f",
		"T int MPI_Foo",
		"T int MPI_Foo(MPI_Comm comm, *)",
		"F comm_rank comm,weird",
	} {
		if _, err := parse(strings.NewReader(bad + "\n")); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// mpifhFunctions returns the Fortran functions Open MPI's libmpi_mpifh
// exports (mpi_x_ → x), or skips where it is not installed.
func mpifhFunctions(t *testing.T) map[string]bool {
	t.Helper()
	if _, err := exec.LookPath("nm"); err != nil {
		t.Skip("no nm")
	}
	dir, err := exec.Command("pkg-config", "--variable=libdir", "ompi-c").Output()
	if err != nil {
		t.Skip("pkg-config knows no ompi-c: install libopenmpi-dev to check the Fortran entry points")
	}
	lib := filepath.Join(strings.TrimSpace(string(dir)), "libmpi_mpifh.so")
	if _, err := os.Stat(lib); err != nil {
		t.Skipf("no %s", lib)
	}
	out, err := exec.Command("nm", "-D", "--defined-only", lib).Output()
	if err != nil {
		t.Fatalf("nm %s: %v", lib, err)
	}
	fns := map[string]bool{}
	re := regexp.MustCompile(`(?m) mpi_([a-z0-9_]+[a-z0-9])_$`)
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		fns[m[1]] = true
	}
	if len(fns) < 300 {
		t.Fatalf("found %d Fortran functions in %s: the pattern no longer fits it", len(fns), lib)
	}
	return fns
}

// TestFortranCoversMpifh: every function of the list that takes a
// communicator (T, C, H) and has a Fortran binding in Open MPI has an
// entry point, generated (F) or in fortran.c, or says why not (N); every
// F and N line names a binding that exists.
func TestFortranCoversMpifh(t *testing.T) {
	fh := mpifhFunctions(t)
	code, err := os.ReadFile("../fortran.c")
	if err != nil {
		t.Fatal(err)
	}
	hand := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^(?:FORTRAN|F_[A-Z]+)\(([A-Z0-9_]+), ([a-z0-9_]+)(?:, MPI_\w+, ([A-Z0-9_]+), ([a-z0-9_]+))?`).FindAllStringSubmatch(string(code), -1) {
		hand[m[2]] = true
		if m[4] != "" {
			hand[m[4]] = true
		}
	}
	if len(hand) < 50 {
		t.Fatalf("found %d entry points in fortran.c: the pattern no longer fits it", len(hand))
	}
	entries := readList(t)
	fortran := map[string]string{}
	for _, e := range entries {
		if e.class == "F" || e.class == "N" || e.class == "W" {
			if c, dup := fortran[e.name]; dup {
				t.Errorf("%s is listed twice (%s, %s)", e.name, c, e.class)
			}
			fortran[e.name] = e.class
			if !fh[e.name] {
				t.Errorf("%s %s: Open MPI has no Fortran binding mpi_%s_", e.class, e.name, e.name)
			}
			if e.class != "N" && hand[e.name] {
				t.Errorf("%s %s: fortran.c defines it too", e.class, e.name)
			}
		}
	}
	for _, e := range entries {
		if e.class != "T" && e.class != "C" && e.class != "H" {
			continue
		}
		lo := strings.ToLower(strings.TrimPrefix(e.name, "MPI_"))
		if !fh[lo] || hand[lo] || fortran[lo] != "" {
			continue
		}
		t.Errorf("%s takes a communicator and Open MPI's Fortran binding mpi_%s_ calls PMPI_ with MPI_COMM_WORLD untranslated: add F %s (or N %s and why)", e.name, lo, lo, lo)
	}
}
