package cdpproxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	tests := []struct {
		name, url string
		want      string // substring of the refusal; "" means allowed
	}{
		{"empty (about:blank)", "", ""},
		{"http", "http://127.0.0.1:8080/a?b#c", ""},
		{"https upper case", "HTTPS://example.com/", ""},
		{"data", "data:text/html,<p>hi</p>", ""},
		{"about:blank", "about:blank", ""},
		{"about:blank fragment", "About:Blank#x", ""},
		{"about:srcdoc", "about:srcdoc", ""},
		{"file", "file:///etc/passwd", "file: URLs are refused by this server's file policy; start it with --allow-unrestricted-file-access"},
		{"file upper case", "FILE:///etc/passwd", "file: URLs are refused"},
		{"file host form", "file://localhost/etc/passwd", "file: URLs are refused"},
		{"file behind spaces and controls", " \x01file:///etc/passwd\x00 ", "file: URLs are refused"},
		{"file with tab and newline in the scheme", "fi\tl\ne:///etc/passwd", "file: URLs are refused"},
		{"view-source of file", "view-source:file:///etc/passwd", `"view-source": URLs are refused`},
		{"filesystem", "filesystem:file:///x", `"filesystem": URLs are refused`},
		{"chrome WebUI", "chrome://settings", `"chrome": URLs are refused`},
		{"about rewritten to chrome", "about:settings", "is refused by this server's file policy"},
		{"javascript", "javascript:alert(1)", `"javascript": URLs are refused`},
		{"blob", "blob:http://x/1", `"blob": URLs are refused`},
		{"no scheme", "/etc/passwd", "is not an absolute URL"},
		{"windows drive", `C:\Windows\win.ini`, `"c": URLs are refused`},
		{"bad scheme characters", "fi le:///etc/passwd", "is not an absolute URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkURL(tt.url)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("checkURL(%q) refused: %v", tt.url, err)
			case tt.want != "" && err == nil:
				t.Fatalf("checkURL(%q) allowed; want a refusal with %q", tt.url, tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("checkURL(%q) = %q; want %q in it", tt.url, err, tt.want)
			}
		})
	}
}

func TestCheckURLQuotesLongValues(t *testing.T) {
	long := "view-source:" + strings.Repeat("A", 1<<20)
	err := checkURL("x" + long)
	if err == nil || len(err.Error()) > 300 {
		t.Fatalf("a 1 MB URL gave an error of %d bytes", len(err.Error()))
	}
	err = checkURL("/" + strings.Repeat("é", 1<<19))
	if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), "bytes)") {
		t.Fatalf("a 1 MB schemeless URL: %v", err)
	}
}

func TestUnescapeQuery(t *testing.T) {
	for in, want := range map[string]string{
		"http://x/":            "http://x/",
		"file%3A%2F%2F%2Fetc":  "file:///etc",
		"%66ile:///etc":        "file:///etc",
		"a%zzb%4":              "a%zzb%4",
		"%25%36%36ile":         "%66ile", // decoded once, as Chromium does
		"about:blank%23x%20y%": "about:blank#x y%",
	} {
		if got := unescapeQuery(in); got != want {
			t.Errorf("unescapeQuery(%q) = %q; want %q", in, got, want)
		}
	}
}

// fileTree is a working dir and an output dir with files, and symlinks
// that lead out of them.
type fileTree struct {
	root, work, out, outside string
}

func newFileTree(t *testing.T) fileTree {
	t.Helper()
	root := t.TempDir()
	ft := fileTree{root: root, work: filepath.Join(root, "work"), out: filepath.Join(root, "out"), outside: filepath.Join(root, "secret")}
	for _, d := range []string{ft.work, ft.out, ft.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(ft.work, "in.txt"), filepath.Join(ft.out, "saved.txt"), filepath.Join(ft.outside, "key")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(ft.outside, "key"), filepath.Join(ft.work, "link-out")))
	must(os.Symlink(ft.outside, filepath.Join(ft.out, "dir-out")))
	must(os.Symlink(filepath.Join(ft.work, "in.txt"), filepath.Join(ft.outside, "link-in")))
	return ft
}

func TestCheckInputFile(t *testing.T) {
	ft := newFileTree(t)
	g := newFileGuard(FilePolicy{InputRoots: []string{ft.work}, OutputDir: ft.out})
	tests := []struct {
		name, path string
		ok         bool
	}{
		{"in the working dir", filepath.Join(ft.work, "in.txt"), true},
		{"in the output dir", filepath.Join(ft.out, "saved.txt"), true},
		{"a root itself", ft.work, true},
		{"outside", filepath.Join(ft.outside, "key"), false},
		{"system file", "/etc/passwd", false},
		{"traversal", ft.work + "/../secret/key", false},
		{"relative", "in.txt", false},
		{"symlink out of a root", filepath.Join(ft.work, "link-out"), false},
		{"through a symlinked dir", filepath.Join(ft.out, "dir-out", "key"), false},
		{"symlink from outside into a root", filepath.Join(ft.outside, "link-in"), true},
		{"sibling with a common prefix", ft.work + "x/in.txt", false},
		{"missing file in a root", filepath.Join(ft.work, "none.txt"), true},
		{"missing file outside", filepath.Join(ft.outside, "none"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := g.checkInputFile(tt.path)
			if (err == nil) != tt.ok {
				t.Fatalf("checkInputFile(%q) = %v; want ok=%v", tt.path, err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "--allow-unrestricted-file-access") {
				t.Fatalf("refusal does not say what to do: %v", err)
			}
		})
	}
	if err := newFileGuard(FilePolicy{}).checkInputFile(filepath.Join(ft.work, "in.txt")); err == nil {
		t.Fatal("the zero FilePolicy accepted a file")
	}
}

func TestCheckDownload(t *testing.T) {
	ft := newFileTree(t)
	g := newFileGuard(FilePolicy{InputRoots: []string{ft.work}, OutputDir: ft.out})
	tests := []struct {
		name, behavior, path string
		ok                   bool
	}{
		{"deny", "deny", "", true},
		{"deny with any path", "deny", "/", true},
		{"allow into the output dir", "allow", ft.out, true},
		{"allowAndName into a new subdir", "allowAndName", filepath.Join(ft.out, "a", "b"), true},
		{"allow without a path (the browser's own dir)", "allow", "", false},
		{"default (the browser's own dir)", "default", "", false},
		{"allow into the working dir", "allow", ft.work, false},
		{"allow into /tmp", "allow", os.TempDir(), false},
		{"through a symlinked dir", "allow", filepath.Join(ft.out, "dir-out"), false},
		{"traversal", "allow", ft.out + "/../secret", false},
		{"relative", "allow", "out", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := g.checkDownload(tt.behavior, tt.path); (err == nil) != tt.ok {
				t.Fatalf("checkDownload(%q, %q) = %v; want ok=%v", tt.behavior, tt.path, err, tt.ok)
			}
		})
	}
	if err := newFileGuard(FilePolicy{}).checkDownload("allow", ft.out); err == nil {
		t.Fatal("a policy without an output dir accepted a download dir")
	}
}

func TestFilePolicyValidate(t *testing.T) {
	base := Config{BindHost: "127.0.0.1"}
	for name, f := range map[string]FilePolicy{
		"relative input root": {InputRoots: []string{"work"}},
		"relative output dir": {OutputDir: "out"},
	} {
		c := base
		c.Files = f
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
			t.Errorf("%s: Validate = %v", name, err)
		}
	}
	if newFileGuard(FilePolicy{Unrestricted: true}) != nil {
		t.Fatal("an unrestricted policy has a guard")
	}
}
