package driver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fakeNode(t *testing.T, version string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "node")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+version+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckNode(t *testing.T) {
	cases := []struct {
		name, path, want string
	}{
		{"none", "", "install Node.js 20"},
		{"missing", "/no/such/node", "run /no/such/node --version"},
		{"too old", fakeNode(t, "v18.19.0"), "is v18.19.0"},
		{"garbage", fakeNode(t, "hello"), `printed "hello"`},
		{"ok", fakeNode(t, "v20.20.2"), ""},
		{"newer ok", fakeNode(t, "v24.1.0"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckNode(t.Context(), tc.path)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrNoNode) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want ErrNoNode with %q", err, tc.want)
			}
		})
	}
}

func TestCheckReportsMissingDriver(t *testing.T) {
	dir := t.TempDir()
	_, err := Check(t.Context(), Options{Dir: dir, NodePath: fakeNode(t, "v20.0.0")})
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "cloakbrowser-mcp install") {
		t.Fatalf("err %v", err)
	}
}

func TestStartWithoutDriverFailsClearly(t *testing.T) {
	d := Start(Options{Dir: t.TempDir(), NodePath: fakeNode(t, "v20.0.0")}, false)
	_, err := d.Get(t.Context())
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("err %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestInstallFromUnreachableRegistry shows the error an offline machine gets.
func TestInstallFromUnreachableRegistry(t *testing.T) {
	t.Setenv("PLAYWRIGHT_GO_NPM_REGISTRY", "")
	_, err := Install(t.Context(), Options{Dir: t.TempDir(), NodePath: fakeNode(t, "v20.0.0"), Registry: "http://127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "http://127.0.0.1:1") || !strings.Contains(err.Error(), "PLAYWRIGHT_GO_NPM_REGISTRY") {
		t.Fatalf("err %v", err)
	}
}
