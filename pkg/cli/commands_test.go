package cli_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
)

// fakeRelease is a CloakBrowser archive for linux-x64: a top directory with
// a chrome script and 600 kB of incompressible data, so a slow mirror has
// something to report progress on.
func fakeRelease(t *testing.T) []byte {
	t.Helper()
	noise := make([]byte, 600_000)
	rand.Read(noise)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name string
		body []byte
		mode int64
	}{
		{"cloakbrowser-linux-x64/chrome", []byte("#!/bin/sh\necho CloakBrowser 146.0.7680.177.5\n"), 0o755},
		{"cloakbrowser-linux-x64/resources.pak", noise, 0o644},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(f.body)
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// slowMirror serves the archive at the pinned version's path in 30 flushed
// pieces, 30 ms apart; everything else is 404.
func slowMirror(t *testing.T, archive []byte) *httptest.Server {
	want := "/chromium-v" + cloakbrowser.PinnedVersion + "/" + cloakbrowser.ArchiveName(cloakbrowser.PlatformLinuxX64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != want {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
		step := len(archive)/30 + 1
		for i := 0; i < len(archive); i += step {
			w.Write(archive[i:min(i+step, len(archive))])
			w.(http.Flusher).Flush()
			select {
			case <-time.After(30 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// installCmd is `cloakbrowser-mcp install` against mirror with its own cache.
func installCmd(t *testing.T, mirror string, env ...string) *exec.Cmd {
	cmd := exec.Command(mcptest.Binary(t), "install")
	cmd.Env = append(os.Environ(),
		"CLOAKBROWSER_CACHE_DIR="+t.TempDir(),
		"CLOAKBROWSER_DOWNLOAD_URL="+mirror,
		"CLOAKBROWSER_SKIP_CHECKSUM=true", // the mirror has no signed SHA256SUMS
		"NO_COLOR=", "TERM=xterm")
	cmd.Env = append(cmd.Env, env...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

var ansiColor = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// TestInstallProgress: `install` reports the archive download with plain
// lines when stderr is not a terminal, and with a progress bar (bytes, rate,
// ETA; coloured unless NO_COLOR) when it is one.
func TestInstallProgress(t *testing.T) {
	archive := fakeRelease(t)
	mirror := slowMirror(t, archive).URL
	what := "CloakBrowser " + cloakbrowser.PinnedVersion

	t.Run("plain lines on a pipe", func(t *testing.T) {
		cmd := installCmd(t, mirror)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("install: %v\n%s", err, stderr.String())
		}
		if !strings.Contains(stdout.String(), "browser: CloakBrowser "+cloakbrowser.PinnedVersion+" at ") {
			t.Errorf("stdout: %s", stdout.String())
		}
		// A line comes as the bytes cross a tenth, with how far they got
		// (a read can take them past it: 43%).
		mid := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(what) + `: [1-9][0-9]?% [0-9.]+/0\.6 MB, [0-9.]+ MB/s, ETA [0-9a-z.]+$`)
		done := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(what) + `: done, 0\.6 MB in [0-9.]+m?s$`)
		if !mid.MatchString(stderr.String()) || !done.MatchString(stderr.String()) || strings.ContainsAny(stderr.String(), "\r\x1b") {
			t.Errorf("stderr lacks plain progress lines (or has terminal codes):\n%q", stderr.String())
		}
	})

	for _, tc := range []struct {
		name    string
		noColor string
	}{{"a bar on a terminal", ""}, {"no colour under NO_COLOR", "1"}} {
		t.Run(tc.name, func(t *testing.T) {
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Fatalf("open a pty: %v", err)
			}
			defer ptmx.Close()
			pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 120})
			cmd := installCmd(t, mirror, "NO_COLOR="+tc.noColor)
			var stdout bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, tty
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close() // the child has it; EOF (EIO) when it exits
			var screen bytes.Buffer
			copied := make(chan error, 1)
			go func() { _, err := io.Copy(&screen, ptmx); copied <- err }()
			werr := cmd.Wait()
			if err := <-copied; err != nil && !errors.Is(err, syscall.EIO) {
				t.Fatalf("read the pty: %v", err)
			}
			out := screen.String()
			if werr != nil {
				t.Fatalf("install: %v\n%q", werr, out)
			}
			// A bar redraws one line: carriage returns, a percentage, the
			// byte counts, a rate and elapsed:ETA.
			bar := regexp.MustCompile(`\r` + regexp.QuoteMeta(what) + ` +[0-9]+% \[[=> ]+\] \([0-9.]+/[0-9.]+ [kMG]?B, [0-9.]+ [kMG]?B/s\) \[[0-9]+s:[0-9]+s\]`)
			if n := len(bar.FindAllString(ansiColor.ReplaceAllString(out, ""), -1)); n < 3 {
				t.Errorf("%d bar frames on the terminal, want at least 3:\n%q", n, out)
			}
			if colored := ansiColor.MatchString(out); colored != (tc.noColor == "") {
				t.Errorf("colour codes present = %v with NO_COLOR=%q:\n%q", colored, tc.noColor, out)
			}
		})
	}
}

// doctor runs `cloakbrowser-mcp doctor --json` with args and an empty
// CloakBrowser cache, and returns its report and exit code.
func doctor(t *testing.T, args ...string) (report struct {
	OK     bool
	Binary *struct {
		Source, FallbackReason string
		Tried                  []string
		Stealth                *bool
		StealthProtections     *struct {
			AutomationFlagOff, WebdriverFalse, UAHeadlessFree, BrandsRisk, FingerprintPatches bool
			Brands, Viewport                                                                  string
			Overrides, LaunchSettings, Risks                                                  []string
		}
	}
	BrowserVersion string
	Launch         *struct{ OK bool }
	Problems       []string
	Notes          []string
}, code int) {
	t.Helper()
	cmd := exec.Command(mcptest.Binary(t), append([]string{"doctor", "--json"}, args...)...)
	cmd.Env = append(os.Environ(), "CLOAKBROWSER_CACHE_DIR="+t.TempDir())
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("doctor --json printed %q: %v", out, err)
	}
	return report, cmd.ProcessState.ExitCode()
}

// TestDoctorStealth: doctor --json keeps the binary's "stealth" a bool and
// reports the protections beside it, as cloakbrowser_binary_info does; on a
// system Chromium the brands are a fingerprint risk.
func TestDoctorStealth(t *testing.T) {
	r, _ := doctor(t, "--no-launch", "--viewport-size", "1280x720", "--context-options", `{"timezoneId":"Asia/Tokyo"}`)
	if r.Binary == nil || r.Binary.Stealth == nil || *r.Binary.Stealth || r.Binary.StealthProtections == nil {
		t.Fatalf("want stealth false and stealthProtections: %+v", r.Binary)
	}
	sp := r.Binary.StealthProtections
	if !sp.AutomationFlagOff || !sp.WebdriverFalse || !sp.UAHeadlessFree || !sp.BrandsRisk || sp.FingerprintPatches ||
		!strings.Contains(sp.Brands, "not Google Chrome") || sp.Viewport != "emulated 1280x720 (--viewport-size)" {
		t.Errorf("stealthProtections: %+v", *sp)
	}
	if !slices.Contains(sp.Overrides, "viewport") || !slices.Contains(sp.LaunchSettings, "TZ") || slices.Contains(sp.Overrides, "timezone") {
		t.Errorf("overrides %q, launch settings %q", sp.Overrides, sp.LaunchSettings)
	}
}

// TestDoctorWording: doctor says why it did not download (itself, or
// --no-download), and calls a file that is not a browser that, before
// launching it ("target closed" was all it said).
func TestDoctorWording(t *testing.T) {
	t.Run("doctor does not download", func(t *testing.T) {
		r, _ := doctor(t, "--no-launch")
		if r.Binary == nil || r.Binary.Source != cloakbrowser.SourceSystem {
			t.Fatalf("want the system Chromium: %+v", r)
		}
		if !strings.Contains(r.Binary.FallbackReason, "doctor does not download") || strings.Contains(strings.Join(append(r.Notes, r.Binary.FallbackReason), " "), "disabled") {
			t.Errorf("reason %q, notes %q", r.Binary.FallbackReason, r.Notes)
		}
		if !regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`).MatchString(r.BrowserVersion) {
			t.Errorf("browserVersion = %q", r.BrowserVersion)
		}
	})
	t.Run("--no-download disables downloads", func(t *testing.T) {
		r, _ := doctor(t, "--no-launch", "--no-download")
		if r.Binary == nil || !strings.HasSuffix(r.Binary.FallbackReason, "downloads are disabled") {
			t.Errorf("want the reason to be --no-download: %+v", r.Binary)
		}
	})
	data := filepath.Join(t.TempDir(), "hostname")
	if err := os.WriteFile(data, []byte("box\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(t.TempDir(), "hostname")
	if err := os.WriteFile(notExec, []byte("box\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lsPath, err := exec.LookPath("ls")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, bin, want string }{
		{"an executable data file", data, "exec format error"},
		{"no execute bit", notExec, "no execute bit"},
		{"another program", lsPath, "not a Chromium version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, code := doctor(t, "--binary-path", tc.bin)
			all := strings.Join(r.Problems, "\n")
			if code != 1 || r.OK || !strings.Contains(all, "not a browser executable") || !strings.Contains(all, tc.want) {
				t.Errorf("exit %d, problems:\n%s", code, all)
			}
			if r.Launch != nil || strings.Contains(all, "target closed") {
				t.Errorf("launched it anyway: %s", all)
			}
		})
	}
}
