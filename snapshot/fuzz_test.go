package snapshot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics and that whatever parses renders
// back to the same text; filters, stats and diffs must cope with the result.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testdataDir, "*.yml"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{
		"", "\n", "- a", "- 'b: c'", "- d:\n  - e", "- f \"g\" [h=i] [ref=e1]: j",
		"- k /l/ [ref=e2]", "- text: \"\\x85\"", "  - m", "- n:\n      - o", "- /url: x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := Parse(s)
		if err != nil {
			return
		}
		if got := tr.Render(); got != s {
			t.Fatalf("Render(Parse(%q)) = %q", s, got)
		}
		_ = tr.Stats()
		_ = tr.Interactive().Render()
		_ = tr.Compact().Render()
		_ = tr.MaxDepth(2).Render()
		_ = tr.Query("a b").Render()
		if d := Diff(tr, tr, 0); !d.Unchanged {
			t.Fatalf("a tree differs from itself:\n%s", d.Text)
		}
		empty, _ := Parse("")
		_ = Diff(empty, tr, 100)
		_ = Diff(tr, empty, 100)
		if cut, _ := Truncate(s, 10); !strings.HasPrefix(s, strings.TrimSuffix(cut, "\n"+TruncationMarker)) {
			t.Fatalf("Truncate changed the kept text")
		}
	})
}

// FuzzDiff checks the diff of two arbitrary snapshots: it never panics, a
// snapshot diffed with itself is unchanged, and no ref that is new in cur is
// lost: each appears in the diff's text (every such line is printed when
// nothing collapses and no budget cuts).
func FuzzDiff(f *testing.F) {
	seeds := []string{"", "- a [ref=e1]", "- a [ref=e1]:\n  - b [ref=e2]: x", "- list [ref=e3]:\n  - listitem [ref=e4]: one\n  - listitem [ref=e5]: two"}
	files, _ := filepath.Glob(filepath.Join(testdataDir, "lab*.ai.yml"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			seeds = append(seeds, string(b))
		}
	}
	for _, a := range seeds {
		for _, b := range seeds {
			f.Add(a, b)
		}
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		prev, err1 := Parse(a)
		cur, err2 := Parse(b)
		if err1 != nil || err2 != nil {
			return
		}
		d := Diff(prev, cur, 0)
		_ = DiffWith(prev, cur, DiffOptions{Budget: 200, Collapse: 2, RootNewOnly: true})
		if self := Diff(cur, cur, 0); !self.Unchanged || self.Text != "" {
			t.Fatalf("diff(a,a) not empty:\n%s", self.Text)
		}
		// The compact form: nothing for a tree against itself, and every
		// ref it shows is one of cur's.
		if self := DiffWith(cur, cur, DiffOptions{Compact: true}); !self.Unchanged {
			t.Fatalf("compact diff(a,a) not empty:\n%s", self.Text)
		}
		compact := DiffWith(prev, cur, DiffOptions{Compact: true, Budget: 500})
		for _, m := range refInLine.FindAllStringSubmatch(compact.Text, -1) {
			if _, ok := cur.Find(m[1]); !ok && !strings.Contains(b, m[0]) { // or in an opaque line
				t.Fatalf("compact diff shows ref %s that cur lacks:\n%s", m[1], compact.Text)
			}
		}
		old := map[string]bool{}
		prev.Walk(func(n *Node, _ int) bool {
			if n.Ref != "" {
				old[n.Ref] = true
			}
			return true
		})
		cur.Walk(func(n *Node, _ int) bool {
			if n.Ref != "" && n.Kind == KindElement && !old[n.Ref] && !strings.Contains(d.Text, "[ref="+n.Ref+"]") {
				t.Fatalf("new ref %s missing from the diff:\n%s", n.Ref, d.Text)
			}
			return true
		})
	})
}
