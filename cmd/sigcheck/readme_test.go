package main

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeSnippets holds every Go snippet of the README to being lines
// of one runnable Example function of the repository, in order (lines
// may be left out: setup, checks, output). So every snippet compiles and
// does what the Example's Output says, and go test runs it. Test files
// are parsed whatever their build tags, so a snippet of code that needs
// a tag (cgo, MPI) is held to an Example that go test -tags … runs.
func TestReadmeSnippets(t *testing.T) {
	const root = "../.."
	examples := map[string][]string{} // "file: ExampleName" → its body's lines
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return nil // someone's file mid-edit: its examples are not counted
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Example") || fn.Body == nil {
				continue
			}
			body := src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset]
			examples[path+": "+fn.Name.Name] = snippetLines(string(body))
		}
		return nil
	})
	if len(examples) == 0 {
		t.Fatal("no Example functions found")
	}

	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	snippets := 0
	sc := bufio.NewScanner(strings.NewReader(string(readme)))
	for line, start, in := 0, 0, false; sc.Scan(); {
		line++
		text := sc.Text()
		switch {
		case !in && strings.TrimSpace(text) == "```go":
			in, start = true, line
			var b strings.Builder
			for sc.Scan() {
				line++
				if strings.TrimSpace(sc.Text()) == "```" {
					break
				}
				b.WriteString(sc.Text() + "\n")
			}
			in = false
			snippets++
			want := snippetLines(b.String())
			best, bestName := -1, ""
			for name, body := range examples {
				if n := matched(want, body); n > best {
					best, bestName = n, name
				}
			}
			if best < len(want) {
				t.Errorf("README.md:%d: the Go snippet is not lines of any Example (one in a file under a build tag, //go:build mpi, counts too); the closest, %s, has its first %d lines, but not %q",
					start, bestName, best, want[best])
			}
		}
	}
	if snippets == 0 {
		t.Error("no Go snippet in the README: the test tests nothing")
	}
}

// snippetLines returns the non-blank lines of src with their spacing
// made canonical (gofmt aligns comments differently in a shorter block).
func snippetLines(src string) []string {
	var out []string
	for l := range strings.SplitSeq(src, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, strings.Join(f, " "))
		}
	}
	return out
}

// matched returns how many of want's lines occur in body in order.
func matched(want, body []string) int {
	n := 0
	for _, l := range body {
		if n < len(want) && l == want[n] {
			n++
		}
	}
	return n
}
