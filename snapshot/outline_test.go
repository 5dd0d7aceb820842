package snapshot

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// bigPage builds a page like a news site: a banner with a search form, a
// navigation of many links, a main article with headings and a form, and
// a footer of links.
func bigPage(navLinks int) string {
	var b strings.Builder
	b.WriteString("- banner [ref=e1]:\n")
	b.WriteString("  - search [ref=e2]:\n    - searchbox \"Search\" [ref=e3]\n    - button \"Go\" [ref=e4]\n")
	b.WriteString("  - navigation \"Sections\" [ref=e5]:\n    - list [ref=e6]:\n")
	ref := 100
	for i := 0; i < navLinks; i++ {
		fmt.Fprintf(&b, "      - listitem [ref=e%d]:\n        - link \"Section %d\" [ref=e%d] [cursor=pointer]:\n          - /url: /s/%d\n", ref, i, ref+1, i)
		ref += 2
	}
	b.WriteString("- main [ref=e7]:\n  - heading \"Tram line vote\" [level=1] [ref=e8]\n")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "  - heading \"Part %d\" [level=2] [ref=e%d]\n  - paragraph [ref=e%d]: %s\n", i, ref, ref+1, strings.Repeat("words ", 40))
		ref += 2
	}
	b.WriteString("  - form \"Newsletter\" [ref=e9]:\n    - textbox \"Email address\" [ref=e10]\n    - button \"Subscribe\" [ref=e11]\n")
	b.WriteString("- contentinfo [ref=e12]:\n  - link \"About us\" [ref=e13] [cursor=pointer]:\n    - /url: /about\n")
	return b.String()
}

func TestOutline(t *testing.T) {
	tree, err := Parse(bigPage(300))
	if err != nil {
		t.Fatal(err)
	}
	out := Outline(tree, OutlineOptions{Budget: 1200})
	if n := utf8.RuneCountInString(out); n > 1200 {
		t.Errorf("outline is %d chars, budget 1200:\n%s", n, out)
	}
	for _, want := range []string{
		"- page: 301 links, 2 buttons, 2 fields",
		`navigation "Sections" [ref=e5]: 300 links`,
		`main [ref=e7]: 2 buttons`[:len(`main [ref=e7]:`)],
		`heading "Tram line vote" [level=1] [ref=e8]`,
		`textbox "Email address" [ref=e10]`,
		`searchbox "Search" [ref=e3]`,
		`form "Newsletter" [ref=e9]: 1 button, 1 field`,
		`contentinfo [ref=e12]: 1 link`,
		"more headings, fields and buttons not shown",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("outline lacks %q:\n%s", want, out)
		}
	}
	// Links are counted, never listed; nested regions are indented.
	if strings.Contains(out, `link "Section`) {
		t.Errorf("outline lists navigation links:\n%s", out)
	}
	if !strings.Contains(out, "\n  - search [ref=e2]") {
		t.Errorf("nested region not indented:\n%s", out)
	}
	// Every ref the outline shows is a ref of the page.
	for _, m := range regexp.MustCompile(`\[ref=(e\d+)\]`).FindAllStringSubmatch(out, -1) {
		if _, ok := tree.Find(m[1]); !ok {
			t.Errorf("outline shows ref %s that the page does not have", m[1])
		}
	}
	// A bigger budget shows more headings, never fewer.
	more := Outline(tree, OutlineOptions{Budget: 4000})
	if strings.Count(more, "heading") <= strings.Count(out, "heading") {
		t.Errorf("budget 4000 shows no more headings than 1200")
	}
}

func TestOutlineTinyBudget(t *testing.T) {
	tree, _ := Parse(bigPage(10))
	out := Outline(tree, OutlineOptions{Budget: 120})
	if !strings.HasPrefix(out, "- page: ") || !strings.Contains(out, "regions not shown") {
		t.Errorf("tiny budget:\n%s", out)
	}
}

func TestShortLine(t *testing.T) {
	n := &Node{Kind: KindElement, Role: "link", Name: strings.Repeat("x", 200), Ref: "e1", Attrs: []Attr{{"cursor", "pointer"}}, Props: []Prop{{"url", "/a"}}}
	got := shortLine(n)
	if strings.Contains(got, "cursor") || strings.Contains(got, "/url") || utf8.RuneCountInString(got) > 110 || !strings.Contains(got, "…") {
		t.Errorf("shortLine = %q", got)
	}
}

func TestClipWidth(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{{"short", 40, "short"}, {"abcdef", 6, "abcdef"}, {"abcdefg", 6, "abcde…"}, {"ééééééé", 4, "ééé…"}} {
		if got := clip(c.in, c.n); got != c.want {
			t.Errorf("clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestLandmarks: one line of the top-level regions with their refs, a
// dialog first wherever it is, nested regions left to the region snapshot,
// the rest counted when the budget is short.
func TestLandmarks(t *testing.T) {
	page := bigPage(50) + "- generic [ref=e20]:\n  - dialog \"Cookie consent\" [ref=e21]:\n    - button \"Accept\" [ref=e22]\n"
	tree, err := Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	want := `dialog "Cookie consent" [ref=e21], banner [ref=e1], main [ref=e7], contentinfo [ref=e12]`
	if got := Landmarks(tree, 200); got != want {
		t.Errorf("Landmarks =\n%s\nwant\n%s", got, want)
	}
	short := Landmarks(tree, 50)
	if short != `dialog "Cookie consent" [ref=e21], +3 more` {
		t.Errorf("Landmarks within 50 = %q", short)
	}
	if n := utf8.RuneCountInString(short); n > 50 {
		t.Errorf("Landmarks within 50 is %d chars", n)
	}
	long := strings.Repeat("very long name ", 10)
	tree, _ = Parse(`- navigation "` + long + `" [ref=e1]:` + "\n  - link \"x\" [ref=e2]\n")
	if got := Landmarks(tree, 200); !strings.HasPrefix(got, `navigation "very long name`) || !strings.Contains(got, `…" [ref=e1]`) {
		t.Errorf("a long name is not cut: %q", got)
	}
	tree, _ = Parse("- paragraph [ref=e1]: no regions\n")
	if got := Landmarks(tree, 200); got != "" {
		t.Errorf("a page without regions: %q", got)
	}
}
