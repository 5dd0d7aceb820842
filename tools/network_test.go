package tools

import (
	"strings"
	"testing"
)

func TestCheckGlob(t *testing.T) {
	cases := []struct {
		name, pattern, want string // want "" = valid
	}{
		{"any path", "**/api/users", ""},
		{"extensions", "**/*.{png,jpg}", ""},
		{"absolute", "https://example.com/*.json", ""},
		{"scheme glob", "http*://example.com/**", ""},
		{"escaped paren", `**/wiki/Go_\(language\)`, ""},
		{"query", "**/search?q=*", ""},
		{"data url", "data:*", ""},
		{"empty", "  ", "empty"},
		{"anchored regexp", "^https://.*$", "regular expression"},
		{"regexp group", "**/api/(users|teams)", "regular expression"},
		{"regexp class", `**/item/\d+`, "regular expression"},
		{"brackets", "**/item/[0-9]", "regular expression"},
		{"nested braces", "**/*.{a,{b,c}}", "nests"},
		{"open brace", "**/*.{png", "{ without }"},
		{"close brace", "**/*.png}", "} without {"},
		{"lone backslash", `**/x\`, "backslash"},
		{"relative path", "/api/users", "would never match"},
		{"bare word", "api", "would never match"},
		{"whitespace", "**/a b", "whitespace"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkGlob(tc.pattern)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("checkGlob(%q): %v", tc.pattern, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("checkGlob(%q) = %v, want %q", tc.pattern, err, tc.want)
			}
		})
	}
}

func TestParseHeaderLines(t *testing.T) {
	got, err := parseHeaderLines([]string{"X-A: 1", "x-b:two words ", "X-C:"})
	if err != nil || len(got) != 3 || got[1] != [2]string{"x-b", "two words"} || got[2][1] != "" {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"nocolon", ": v", "X Y: v", "X: a\r\nY: b"} {
		if _, err := parseHeaderLines([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
