package cli_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
)

// deadCDN stands in for a CloakBrowser download origin that has nothing
// (every path 404).
func deadCDN(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// runCLI runs the binary with args and env (an empty CloakBrowser cache
// of its own added) and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(mcptest.Binary(t), args...)
	cmd.Env = append(append(os.Environ(), "CLOAKBROWSER_CACHE_DIR="+t.TempDir()), env...)
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// TestInstallCloakBrowserUnavailable: when CloakBrowser cannot be fetched,
// install exits 0 if the system Chromium answers in its place, and says the
// server will use it; --require-cloakbrowser makes that exit 1, and so does
// having no browser at all. The failed download is said once and the output
// ends with the next step.
func TestInstallCloakBrowserUnavailable(t *testing.T) {
	mcptest.Chromium(t)
	env := []string{"CLOAKBROWSER_DOWNLOAD_URL=" + deadCDN(t)}
	for _, tc := range []struct {
		name      string
		args      []string
		code      int
		stdout    string // "" means it must not say it falls back
		stderr    string
		notStdout string
	}{
		{name: "the system Chromium serves", args: nil, code: 0,
			stdout: "browser: fallback: the server will use ", stderr: "--require-cloakbrowser"},
		{name: "--require-cloakbrowser", args: []string{"--require-cloakbrowser"}, code: 1,
			stderr: "--require-cloakbrowser: ", notStdout: "fallback"},
		{name: "no browser at all", args: []string{"--binary-path", filepath.Join(t.TempDir(), "nope")}, code: 1,
			stderr: "no other browser to fall back on", notStdout: "fallback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, env, append([]string{"install"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if tc.stdout != "" && !strings.Contains(stdout, tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, stdout)
			}
			if tc.notStdout != "" && strings.Contains(stdout, tc.notStdout) {
				t.Errorf("stdout says %q:\n%s", tc.notStdout, stdout)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
			out := strings.TrimSpace(stderr)
			// "HTTP 404", not "404": the mirror's port may hold those digits.
			if n := strings.Count(out, "HTTP 404"); n != 1 {
				t.Errorf("the 404 is said %d times, want once:\n%s", n, out)
			}
			lines := strings.Split(out, "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "next: ") {
				t.Errorf("stderr does not end with the next step:\n%s", out)
			}
		})
	}
}

// TestDoctorSaysWhatTheServerWillUse: with CloakBrowser not installed,
// doctor asks the download origin and says what the server will do — use
// the system Chromium when the origin has nothing, download at its first
// launch when it answers — and prints no empty version=.
func TestDoctorSaysWhatTheServerWillUse(t *testing.T) {
	mcptest.Chromium(t)
	emptyVersion := regexp.MustCompile(`version=(\s|$)`)
	check := func(t *testing.T, mirror string, want, not string) {
		t.Helper()
		stdout, stderr, code := runCLI(t, []string{"CLOAKBROWSER_DOWNLOAD_URL=" + mirror}, "doctor", "--no-launch")
		if code != 0 {
			t.Fatalf("doctor: exit %d\n%s\n%s", code, stdout, stderr)
		}
		if emptyVersion.MatchString(stdout) {
			t.Errorf("doctor prints an empty version=:\n%s", stdout)
		}
		if !strings.Contains(stdout, want) || strings.Contains(stdout, not) {
			t.Errorf("doctor should say %q and not %q:\n%s", want, not, stdout)
		}
	}
	t.Run("the origin has nothing", func(t *testing.T) {
		check(t, deadCDN(t), "the server will use a system Chromium without CloakBrowser's stealth patches", "first browser launch")
	})
	t.Run("the origin has the release", func(t *testing.T) {
		sums := "/chromium-v" + cloakbrowser.PinnedVersion + "/SHA256SUMS"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != sums {
				http.NotFound(w, r)
				return
			}
			w.Write([]byte("version=" + cloakbrowser.PinnedVersion + "\n"))
		}))
		t.Cleanup(srv.Close)
		check(t, srv.URL, "the server downloads it at its first browser launch", "the server will use a system Chromium")
	})
}
