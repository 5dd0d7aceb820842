package snapshot

import (
	"strings"
	"testing"
)

func TestStats(t *testing.T) {
	tests := []struct {
		name string
		text string
		want Stats
	}{
		{"empty", "", Stats{}},
		{"brief example", readFixture(t, "brief.ai.yml"), Stats{Lines: 17, Chars: 552, Refs: 14, InteractiveRefs: 5}},
		{"multibyte counts code points", `- button "☰☰" [ref=e1]`, Stats{Lines: 1, Chars: 22, Refs: 1, InteractiveRefs: 1}},
		{"role refs", "- main:\n  - heading \"H\" [level=1] [ref=r1]\n  - link \"L\" [ref=r2]", Stats{Lines: 3, Chars: 64, Refs: 2, InteractiveRefs: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := TextStats(tc.text); got != tc.want {
				t.Errorf("TextStats = %+v, want %+v", got, tc.want)
			}
			if got := mustParse(t, tc.text).Stats(); got != tc.want {
				t.Errorf("Tree.Stats = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	const text = "- a\n- bb\n- ccc"
	tests := []struct {
		name    string
		text    string
		max     int
		want    string
		wantCut bool
	}{
		{"no limit", text, 0, text, false},
		{"fits exactly", text, len(text), text, false},
		{"cut after the second line", text, 11, "- a\n- bb\n" + TruncationMarker, true},
		{"second line just fits", text, 8, "- a\n- bb\n" + TruncationMarker, true},
		{"cut after the first line", text, 7, "- a\n" + TruncationMarker, true},
		{"first line too long", "- abcdef\n- g", 4, "- ab\n" + TruncationMarker, true},
		{"code points, not bytes", "- ☰☰☰\n- x", 5, "- ☰☰☰\n" + TruncationMarker, true},
		{"multibyte fits", "- ☰☰☰", 5, "- ☰☰☰", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := Truncate(tc.text, tc.max)
			if got != tc.want || cut != tc.wantCut {
				t.Errorf("Truncate(%q, %d) = %q, %v; want %q, %v", tc.text, tc.max, got, cut, tc.want, tc.wantCut)
			}
			if cut {
				kept := strings.TrimSuffix(got, "\n"+TruncationMarker)
				if n := len([]rune(kept)); n > tc.max {
					t.Errorf("kept %d code points, more than %d", n, tc.max)
				}
			}
		})
	}
}
