package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseDevToolsActivePort(t *testing.T) {
	cases := []struct {
		name, in string
		port     int
		err      string
	}{
		{"ok", "36307\n/devtools/browser/0393c7ae-9bf9-45b1-88fe-ac06269ccb00\n", 36307, ""},
		{"no trailing newline", "9222\n/devtools/browser/x", 9222, ""},
		{"port only (being written)", "36307\n", 0, "incomplete"},
		{"empty", "", 0, "incomplete"},
		{"not a number", "abc\n/devtools/browser/x\n", 0, `port "abc"`},
		{"zero", "0\n/devtools/browser/x\n", 0, `port "0"`},
		{"too big", "70000\n/devtools/browser/x\n", 0, `port "70000"`},
		{"wrong path", "9222\n/json/version\n", 0, "incomplete"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			port, err := parseDevToolsActivePort([]byte(tc.in))
			if tc.err == "" {
				if err != nil || port != tc.port {
					t.Fatalf("got %d, %v; want %d", port, err, tc.port)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
		})
	}
}

// TestReadDevToolsPortWaitsBounded: the port is read once the file is
// complete, and a file that never comes is an error after the bound.
func TestReadDevToolsPortWaitsBounded(t *testing.T) {
	dir := t.TempDir()
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = os.WriteFile(filepath.Join(dir, "DevToolsActivePort"), []byte("41234\n/devtools/browser/abc\n"), 0o600)
	}()
	if port, err := readDevToolsPort(t.Context(), dir, 5*time.Second); err != nil || port != 41234 {
		t.Fatalf("got %d, %v", port, err)
	}
	start := time.Now()
	_, err := readDevToolsPort(t.Context(), t.TempDir(), 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no usable") || time.Since(start) > 2*time.Second {
		t.Fatalf("missing file: %v after %v", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := readDevToolsPort(ctx, t.TempDir(), time.Minute); err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Fatalf("cancelled: %v", err)
	}
}
