// Package docs holds the documentation's own checks: every relative link of
// the README and of docs/ reaches a file (and heading) in this repository,
// and the Go snippets they show are the code the tests compile and run.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

func TestMain(m *testing.M) { testtier.Main(m) }

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// pages are the Markdown files the checks read, relative to the repository.
func pages(t *testing.T) []string {
	t.Helper()
	ps, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../README.md"}, ps...)
}

// TestLinksStayInTheRepository: a relative link names a file of this
// repository (never ../shared or anything outside it), and a #fragment a
// heading of that file.
func TestLinksStayInTheRepository(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := stripCode(string(b))
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(link, "#")
			target := p
			if file != "" {
				target = filepath.Join(filepath.Dir(p), file)
			}
			abs, err := filepath.Abs(target)
			if err != nil || !strings.HasPrefix(abs, root+string(filepath.Separator)) {
				t.Errorf("%s: link %q leaves the repository", p, link)
				continue
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: link %q: %v", p, link, err)
				continue
			}
			if frag != "" && strings.HasSuffix(target, ".md") && !hasHeading(t, target, frag) {
				t.Errorf("%s: link %q: no heading #%s in %s", p, link, frag, target)
			}
		}
	}
}

// TestDocsShowSnippets: the embedding page's Go block is the body of the
// test that compiles and runs it.
func TestDocsShowSnippets(t *testing.T) {
	src, err := os.ReadFile("../pkg/embed/doc_snippet_test.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	begin, end := strings.Index(s, "// snippet: begin\n"), strings.Index(s, "\t// snippet: end")
	if begin < 0 || end < begin {
		t.Fatal("pkg/embed/doc_snippet_test.go has no snippet: begin/end markers")
	}
	var want []string
	for _, l := range strings.Split(s[begin+len("// snippet: begin\n"):end], "\n") {
		want = append(want, strings.TrimPrefix(l, "\t"))
	}
	doc, err := os.ReadFile("embedding.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), strings.TrimRight(strings.Join(want, "\n"), "\n")) {
		t.Fatal("docs/embedding.md does not show TestEmbeddingDocSnippet's body verbatim: copy it from pkg/embed/doc_snippet_test.go")
	}
}

var fenceRE = regexp.MustCompile("(?s)```.*?```")

func stripCode(s string) string { return fenceRE.ReplaceAllString(s, "") }

// hasHeading reports whether file has a heading whose GitHub anchor is frag.
func hasHeading(t *testing.T, file, frag string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(stripCode(string(b)), "\n") {
		if strings.HasPrefix(l, "#") {
			if anchor(strings.TrimLeft(l, "# ")) == frag {
				return true
			}
		}
	}
	return false
}

// anchor is GitHub's anchor of a heading: lower case, spaces to hyphens,
// punctuation other than hyphens and underscores dropped.
func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestLayoutListsEveryPackage: the README's Layout table has one row per
// package of the module, and no row for a package that is gone.
func TestLayoutListsEveryPackage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(b), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no ## Layout section")
	}
	if i := strings.Index(layout, "\n## "); i >= 0 {
		layout = layout[:i]
	}
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9_/-]+)` \\|").FindAllStringSubmatch(layout, -1) {
		rows[m[1]] = true
	}
	pkgs := map[string]bool{}
	err = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != ".." || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			rel, _ := filepath.Rel("..", filepath.Dir(path))
			pkgs[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range pkgs {
		if !rows[p] {
			t.Errorf("package %s has no row in the README's Layout", p)
		}
	}
	for r := range rows {
		if !pkgs[r] {
			t.Errorf("the README's Layout lists %s, which has no Go files", r)
		}
	}
}
