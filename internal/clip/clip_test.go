package clip

import (
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"empty", "", `""`},
		{"short", "foo", `"foo"`},
		{"escapes", "a\"b\n", `"a\"b\n"`},
		{"exactly max", strings.Repeat("x", Max), `"` + strings.Repeat("x", Max) + `"`},
		{"one over", strings.Repeat("x", Max+1), `"` + strings.Repeat("x", Max) + `…" (101 chars)`},
		{"megabyte", strings.Repeat("A", 1<<20), `"` + strings.Repeat("A", Max) + `…" (1048576 chars)`},
		{"runes not bytes", strings.Repeat("é", Max), `"` + strings.Repeat("é", Max) + `"`},
		{"long runes", strings.Repeat("é", 300), `"` + strings.Repeat("é", Max) + `…" (300 chars)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Quote(c.in); got != c.want {
				t.Errorf("Quote = %.200s, want %.200s", got, c.want)
			}
		})
	}
}

func TestQuoteBound(t *testing.T) {
	// Control characters quote as escapes of up to 6 bytes; still bounded.
	if got := Quote(strings.Repeat("\x00", 1<<20)); len(got) > 1000 {
		t.Fatalf("Quote of 1 MB NULs is %d bytes", len(got))
	}
}

func TestShort(t *testing.T) {
	if got := Short("https://example.com/"); got != "https://example.com/" {
		t.Errorf("Short kept %q", got)
	}
	long := "data:text/html," + strings.Repeat("x", 500)
	want := Prefix(long, Max) + "… (515 chars)"
	if got := Short(long); got != want {
		t.Errorf("Short = %q, want %q", got, want)
	}
}

func TestWords(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"short", "Unknown key: \"Foo\"", "Unknown key: \"Foo\""},
		{"long run", "Unknown key: \"" + strings.Repeat("Q", 1<<20) + "\" here", "Unknown key: \"" + strings.Repeat("Q", 99) + "… (1048578 chars) here"},
		{"a quoted value stays", "got " + Quote(strings.Repeat("x", 5000)) + " ok", "got " + Quote(strings.Repeat("x", 5000)) + " ok"},
		{"keeps newlines", strings.Repeat("a ", 200) + "\n" + strings.Repeat("b", 300), strings.Repeat("a ", 200) + "\n" + strings.Repeat("b", 100) + "… (300 chars)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Words(c.in); got != c.want {
				t.Errorf("Words = %.300q\nwant %.300q", got, c.want)
			}
		})
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{"": "", "one": "one", "one\ntwo": "one", "\nrest": ""} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
