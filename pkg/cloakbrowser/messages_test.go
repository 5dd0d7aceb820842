package cloakbrowser

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/progress"
)

// TestDownloadFailureSaidOnce: when every origin fails, each origin's cause
// appears once across the log and the error (not once per mirror and again
// in a summary and in Tried), and the error ends with the next step.
func TestDownloadFailureSaidOnce(t *testing.T) {
	down := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	})
	for _, tc := range []struct {
		name string
		run  func(Options) (BinaryInfo, error)
	}{
		{"install", func(o Options) (BinaryInfo, error) { return Install(context.Background(), o) }},
		{"resolve with nothing to fall back to", func(o Options) (BinaryInfo, error) {
			o.AllowDownload = true
			return Resolve(context.Background(), o)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs []string
			o := baseOptions(t.TempDir())
			o.HTTPClient = &http.Client{Transport: handlerTransport{down}}
			o.Logf = func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }
			_, err := tc.run(o)
			if !errors.Is(err, ErrManifestUnavailable) {
				t.Fatalf("err = %v, want ErrManifestUnavailable", err)
			}
			all := strings.Join(logs, "\n") + "\n" + err.Error()
			if n := strings.Count(all, "HTTP 503"); n != 2 { // not "503": a temp dir name can hold the digits
				t.Errorf("the 503 of each origin should be said once (2 in all), said %d times:\n%s", n, all)
			}
			for _, origin := range []string{"https://cloakbrowser.dev/chromium-v", "https://github.com/CloakHQ"} {
				if n := strings.Count(err.Error(), origin); n != 1 {
					t.Errorf("error names %s %d times: %v", origin, n, err)
				}
			}
			if !contains(logs, "failed; trying https://github.com") {
				t.Errorf("no line saying the next mirror is tried: %q", logs)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if tc.name != "install" && !strings.HasSuffix(err.Error(), "Next: "+NextStep) {
				t.Errorf("error does not end with the next step: %v", err)
			}
		})
	}
}

// slowServer serves one file in 20 flushed pieces with a pause between them.
func slowServer(t *testing.T, files map[string][]byte, pause time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		step := len(b)/20 + 1
		for i := 0; i < len(b); i += step {
			w.Write(b[i:min(i+step, len(b))])
			w.(http.Flusher).Flush()
			select {
			case <-time.After(pause):
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestInstallProgressLines drives Install against a local mirror that
// serves a signed release slowly, with the plain (non-terminal) reporter
// that `cloakbrowser-mcp install` uses when stderr is not a terminal.
func TestInstallProgressLines(t *testing.T) {
	pub, priv := newKey(t)
	noise := make([]byte, 400_000) // incompressible, so the archive is big enough to report on
	rand.Read(noise)
	entries := append(goodEntries(), reg("cloakbrowser-linux-x64/resources.pak", string(noise), 0o644))
	archive := makeTarGz(t, entries)
	srv := slowServer(t, release(priv, PinnedVersion, PlatformLinuxX64, archive), 20*time.Millisecond)

	var out bytes.Buffer
	o := baseOptions(t.TempDir())
	o.DownloadURL = srv.URL
	o.PublicKeys = []ed25519.PublicKey{pub}
	o.Progress = func(what string, total int64) ProgressReporter {
		return progress.New(progress.Options{Out: &out, Every: time.Hour}, what, total) // lines by tenths only
	}
	info, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if info.Source != SourceDownload {
		t.Fatalf("info = %+v", info)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	what := "CloakBrowser " + PinnedVersion
	first := fmt.Sprintf("%s: downloading %.1f MB", what, float64(len(archive))/1e6)
	last := regexp.MustCompile(`^` + regexp.QuoteMeta(what) + fmt.Sprintf(`: done, %.1f MB in [0-9.]+m?s$`, float64(len(archive))/1e6))
	// A line comes when the bytes cross a tenth; it says how far they got
	// (a read can take them past the tenth: 43%).
	mid := regexp.MustCompile(`^` + regexp.QuoteMeta(what) + `: ([1-9][0-9]?)% [0-9]+\.[0-9]/[0-9]+\.[0-9] MB, [0-9]+\.[0-9] MB/s, ETA [0-9a-z.]+$`)
	if len(lines) < 3 || lines[0] != first || !last.MatchString(lines[len(lines)-1]) {
		t.Fatalf("progress lines:\n%s", out.String())
	}
	tenth := 0
	for _, l := range lines[1 : len(lines)-1] {
		m := mid.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("line %q does not have the form %s", l, mid)
			continue
		}
		if pct, _ := strconv.Atoi(m[1]); pct/10 <= tenth {
			t.Errorf("line %q does not cross a new tenth (the last line crossed %d0%%)", l, tenth)
		} else {
			tenth = pct / 10
		}
	}
	if tenth == 0 {
		t.Errorf("no line between the first and the last:\n%s", out.String())
	}
}

func TestProbeVersion(t *testing.T) {
	testtier.BrowserTier(t)
	tmp := t.TempDir()
	script := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("no chromium in PATH: apt-get install chromium")
	}
	cases := []struct {
		name, bin, want, wantErr string
	}{
		{name: "the real chromium", bin: chromium, want: `^\d+\.\d+\.\d+\.\d+$`},
		{name: "a Chromium-like answer", bin: script("chrome", `echo "Chromium 146.0.7680.177 built on Debian GNU/Linux 12"`, 0o755), want: `^146\.0\.7680\.177$`},
		{name: "Google Chrome", bin: script("google-chrome", `echo "Google Chrome 146.0.7680.177 "`, 0o755), want: `^146\.0\.7680\.177$`},
		{name: "not executable", bin: script("hostname", "echo Chromium 1.2.3.4", 0o644), wantErr: "not an executable regular file"},
		{name: "a directory", bin: tmp, wantErr: "not an executable regular file"},
		{name: "an executable data file", bin: writeData(t, filepath.Join(tmp, "data"), "box\n"), wantErr: "exec format error"},
		{name: "another program", bin: script("ls", `echo "ls (GNU coreutils) 9.1"`, 0o755), wantErr: `printed "ls (GNU coreutils) 9.1", not a Chromium version`},
		{name: "fails", bin: script("fails", `echo "$(printf 'x%.0s' $(seq 300))" >&2; exit 3`, 0o755), wantErr: "exit status 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ProbeVersion(context.Background(), tc.bin)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrNotBrowser) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want ErrNotBrowser with %q", err, tc.wantErr)
				}
				if len(err.Error()) > 300 {
					t.Errorf("error too long (%d chars): %v", len(err.Error()), err)
				}
				return
			}
			if err != nil || !regexp.MustCompile(tc.want).MatchString(v) {
				t.Fatalf("ProbeVersion = %q, %v; want %s", v, err, tc.want)
			}
		})
	}
}

// TestResolveExplicitNotExecutable: a --binary-path without an execute bit
// (say /etc/hostname) is refused as not a browser, before any launch.
func TestResolveExplicitNotExecutable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "hostname")
	if err := os.WriteFile(p, []byte("box\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := baseOptions(t.TempDir())
	o.BinaryPath = p
	_, err := Resolve(context.Background(), o)
	if !errors.Is(err, ErrNotBrowser) || !strings.Contains(err.Error(), "not a browser executable (mode -rw-r--r--") {
		t.Fatalf("err = %v, want ErrNotBrowser naming the mode", err)
	}
}

// TestDownloadOffReason: the reason a caller gives for not downloading is
// the one reported, not "downloads are disabled".
func TestDownloadOffReason(t *testing.T) {
	sys := filepath.Join(t.TempDir(), "chromium")
	writeExe(t, sys)
	o := baseOptions(t.TempDir())
	o.SystemCandidates = []string{sys}
	o.DownloadOffReason = "doctor does not download"
	info, err := Resolve(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(info.FallbackReason, "and doctor does not download") || strings.Contains(info.FallbackReason, "disabled") {
		t.Errorf("FallbackReason = %q", info.FallbackReason)
	}
}

// writeData writes an executable file that is not a program (like
// /etc/hostname with an execute bit).
func writeData(t *testing.T, p, body string) string {
	t.Helper()
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
