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
