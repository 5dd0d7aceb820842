package page

import "testing"

func TestTypedCount(t *testing.T) {
	for _, c := range []struct {
		name, before, after, text string
		want                      int
	}{
		{"nothing typed", "", "", "hello", 0},
		{"prefix into empty", "", "hel", "hello", 3},
		{"all typed", "", "hello", "hello", 5},
		{"appended", "ab", "abhel", "hello", 3},
		{"at the start", "ab", "helab", "hello", 3},
		{"in the middle", "ab", "ahelb", "hello", 3},
		{"runes", "", "éé", "ééé", 2},
		{"page rewrote it", "", "HEL", "hello", -1},
		{"page cleared it", "abc", "", "hello", -1},
		{"more than the text", "", "hello!", "hello", -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := typedCount(c.before, c.after, c.text); got != c.want {
				t.Errorf("typedCount(%q, %q, %q) = %d, want %d", c.before, c.after, c.text, got, c.want)
			}
		})
	}
}
