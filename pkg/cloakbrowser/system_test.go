package cloakbrowser

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveSystemFallback(t *testing.T) {
	tmp := t.TempDir()
	sys := filepath.Join(tmp, "bin", "chromium")
	writeExe(t, sys)
	notExec := filepath.Join(tmp, "bin", "chromium-noexec")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	notInstalled := filepath.Join(tmp, "cache", "chromium-"+PinnedVersion, "chrome")

	cases := []struct {
		name       string
		candidates []string
		wantPath   string
		wantTried  []string
	}{
		{
			name:       "first usable candidate",
			candidates: []string{filepath.Join(tmp, "missing"), notExec, "definitely-not-a-browser-4711", sys},
			wantPath:   sys,
			wantTried:  []string{"cache: " + notInstalled + ": not installed", "download: not attempted", "missing: not found", "chromium-noexec: not executable", "definitely-not-a-browser-4711: not found in PATH"},
		},
		{
			name:       "no candidates",
			candidates: []string{},
			wantTried:  []string{"cache: ", "download: not attempted", "system: no candidates configured"},
		},
		{
			name:       "none usable",
			candidates: []string{filepath.Join(tmp, "missing"), tmp},
			wantTried:  []string{"cache: ", "missing: not found", "not a regular file"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs []string
			o := baseOptions(filepath.Join(tmp, "cache"))
			o.SystemCandidates = tc.candidates
			o.Logf = func(f string, a ...any) { logs = append(logs, f) }
			info, err := Resolve(context.Background(), o)
			if tc.wantPath == "" {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("err = %v, want ErrNotFound", err)
				}
				for _, s := range tc.wantTried {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not list %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if info.BinaryPath != tc.wantPath || info.Source != SourceSystem || info.Engine != EngineChromium ||
				info.Stealth || info.FallbackReason == "" || info.Version != "" {
				t.Errorf("info = %+v", info)
			}
			if !strings.Contains(info.FallbackReason, "downloads are disabled") {
				t.Errorf("FallbackReason = %q", info.FallbackReason)
			}
			for _, s := range tc.wantTried {
				if !contains(info.Tried, s) {
					t.Errorf("tried %q lacks %q", info.Tried, s)
				}
			}
			if contains(logs, "without CloakBrowser stealth") {
				t.Errorf("the fallback is the result, for the caller to report; Logf got it too: %q", logs)
			}
			if got := StealthArgs(info, 123, ""); got != nil {
				t.Errorf("StealthArgs for system chromium = %v", got)
			}
		})
	}
}
