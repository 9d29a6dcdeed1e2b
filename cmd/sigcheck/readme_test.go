package main

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// docFiles are the pages whose Go snippets are held to the Examples:
// the README and everything under docs/.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	return append([]string{filepath.Join(root, "README.md")}, docs...)
}

// TestReadmeSnippets holds every Go snippet of the README and of docs/
// to being lines of one runnable Example function of the repository, in
// order (lines may be left out: setup, checks, output). So every snippet
// compiles and does what the Example's Output says, and go test runs it.
// Test files are parsed whatever their build tags, so a snippet of code
// that needs a tag (cgo, MPI) is held to an Example that go test -tags …
// runs.
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

	snippets := 0
	for _, doc := range docFiles(t, root) {
		blocks, err := codeBlocks(doc, "go")
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, doc)
		for _, b := range blocks {
			snippets++
			want := snippetLines(b.text)
			best, bestName := -1, ""
			for ex, body := range examples {
				if n := matched(want, body); n > best {
					best, bestName = n, ex
				}
			}
			if best < len(want) {
				t.Errorf("%s:%d: the Go snippet is not lines of any Example (one in a file under a build tag, //go:build mpi, counts too); the closest, %s, has its first %d lines, but not %q",
					name, b.line, bestName, best, want[best])
			}
		}
	}
	if snippets < 7 { // sig, tree, channel ×2, mpi, replicate, encrypt when the docs were split
		t.Errorf("%d Go snippets in the README and docs/: some were lost", snippets)
	}
}

// block is a fenced code block of a Markdown file.
type block struct {
	line int // of its opening fence
	text string
}

// codeBlocks returns the code blocks of a Markdown file whose fence names
// lang.
func codeBlocks(path, lang string) ([]block, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []block
	sc := bufio.NewScanner(strings.NewReader(string(src)))
	for line := 0; sc.Scan(); {
		line++
		if strings.TrimSpace(sc.Text()) != "```"+lang {
			continue
		}
		b := block{line: line}
		var text strings.Builder
		for sc.Scan() {
			line++
			if strings.TrimSpace(sc.Text()) == "```" {
				break
			}
			text.WriteString(sc.Text() + "\n")
		}
		b.text = text.String()
		out = append(out, b)
	}
	return out, sc.Err()
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

// The README begins with the two commands a new user types in a clone:
// the main job on built-in data, and the tests. (It began with a go
// install …@latest, which fails: the module is not published.)
func TestReadmeStartsWithTheTwoCommands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	before, _, _ := strings.Cut(string(readme), "\n## ")
	_, first, ok := strings.Cut(before, "```sh\n")
	first, _, _ = strings.Cut(first, "```")
	if want := "go run ./cmd/sigcheck demo\ngo test ./...\n"; !ok || first != want {
		t.Errorf("the README's first commands, before any section, are %q; want %q", first, want)
	}
	if strings.Contains(string(readme), "go install github.com/sigcheck/sigcheck/cmd/sigcheck@") {
		t.Error("the README still offers go install …@latest: the module is not published")
	}
}

// Every command has a row in the README's table of commands, with a
// link to a page that exists.
func TestReadmeCommandTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for l := range strings.SplitSeq(string(readme), "\n") {
		if name, ok := strings.CutPrefix(l, "| `"); ok {
			name, rest, _ := strings.Cut(name, "`")
			rows[name] = rest
		}
	}
	for _, c := range commands {
		row, ok := rows[c.name]
		switch {
		case !ok:
			t.Errorf("sigcheck %s has no row in the README's table of commands", c.name)
		case !strings.Contains(row, "](docs/"):
			t.Errorf("sigcheck %s: its row links to no page under docs/: %s", c.name, row)
		}
	}
	if _, ok := rows["-version"]; !ok {
		t.Error("no row for -version")
	}
}

// Every relative link of the README and docs/ reaches a file, and a
// link to a heading (page.md#heading) reaches one, as GitHub makes its
// anchors.
func TestDocLinks(t *testing.T) {
	const root = "../.."
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, doc := range docFiles(t, root) {
		src, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, doc)
		for _, m := range link.FindAllStringSubmatch(string(src), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := doc
			if path != "" {
				file = filepath.Join(filepath.Dir(doc), path)
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s: link %s: %v", name, target, err)
				continue
			}
			if anchor != "" && !anchors(t, file)[anchor] {
				t.Errorf("%s: link %s: no heading makes #%s in %s", name, target, anchor, path)
			}
		}
	}
}

// anchors returns the anchors GitHub makes of a Markdown file's headings:
// lower case, punctuation dropped, spaces as hyphens.
func anchors(t *testing.T, path string) map[string]bool {
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for l := range strings.SplitSeq(string(src), "\n") {
		h := strings.TrimLeft(l, "#")
		if h == l || !strings.HasPrefix(h, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

// docs/checksums.md holds the detection table that sigcheck csum -detect
// -markdown prints now (deterministic: seeded corruption).
func TestDocsDetectionTable(t *testing.T) {
	page, err := os.ReadFile("../../docs/checksums.md")
	if err != nil {
		t.Fatal(err)
	}
	o, _, code := sigcheck(t, "csum", "-detect", "-markdown")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !bytes.Contains(page, []byte(o)) {
		t.Errorf("docs/checksums.md does not hold the current table; regenerate it with: go run ./cmd/sigcheck csum -detect -markdown\n%s", o)
	}
}
