package outdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

func TestMain(m *testing.M) { testtier.Main(m) }

func TestOpenRoot(t *testing.T) {
	base := t.TempDir()
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(base, "token-2"))
	cases := []struct {
		name, principal, dir, err string
	}{
		{"stdio shares the output dir", "", base, ""},
		{"anonymous shares the output dir", Anonymous, base, ""},
		{"token gets its own dir", "token-1", filepath.Join(base, "token-1"), ""},
		{"planted symlink refused", "token-2", "", "escapes"},
		{"traversal refused", "../x", "", "unusable"},
		{"slash refused", "a/b", "", "unusable"},
		{"upper case refused", "Token", "", "unusable"},
		{"leading dash refused", "-x", "", "unusable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, dir, err := OpenRoot(base, c.principal)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			if dir != c.dir {
				t.Fatalf("dir = %s, want %s", dir, c.dir)
			}
		})
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("something was created outside: %v", ents)
	}
}

// TestAppendEvictsWithinThePrincipal: an append-only log grows through the
// principal's root and evicts only that principal's older files.
func TestAppendEvictsWithinThePrincipal(t *testing.T) {
	base := t.TempDir()
	open := func(p string) *Area {
		a, err := Open(Options{Base: base, Principal: p, MaxSize: 100})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Close)
		return a
	}
	a, b := open("token-a"), open("token-b")
	if _, err := a.Write("a-old.txt", "", "", []byte(strings.Repeat("a", 60))); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := b.Append("log.md", []byte(strings.Repeat("b", 40))); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := os.Stat(filepath.Join(base, "token-b", "log.md")); err != nil || st.Size() != 120 {
		t.Fatalf("b's log: %v %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(base, "token-a", "a-old.txt")); err != nil {
		t.Fatalf("b's log evicted a's file: %v", err)
	}
	if _, err := a.Append("log.md", []byte(strings.Repeat("a", 60))); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(base, "token-a", "a-old.txt")); err == nil {
		t.Fatal("a's log did not evict a's older file past a's budget")
	}
	if _, err := a.Append("../token-b/log.md", []byte("x")); err == nil {
		t.Fatal("an append left the area")
	}
}
