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
