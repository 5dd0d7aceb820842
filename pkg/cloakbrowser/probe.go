package cloakbrowser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// ErrNotBrowser means a file is not a browser executable: it has no execute
// bit, does not run, or does not answer --version like a Chromium.
var ErrNotBrowser = errors.New("not a browser executable")

// NextStep is what to do when no browser can be found or installed.
const NextStep = "install a Chromium (apt-get install chromium), or run `cloakbrowser-mcp install` with network access, or pass --binary-path"

// probeTimeout bounds `<browser> --version`.
const probeTimeout = 10 * time.Second

// chromiumVersionRE matches what Chromium-family browsers print for
// --version: "Chromium 146.0.7680.177 built on Debian…", "Google Chrome
// 146.0.7680.177", "CloakBrowser 146.0.7680.177.5".
var chromiumVersionRE = regexp.MustCompile(`(?i)\b(chromium|chrome|cloakbrowser|chrome for testing)\b[^\n]*?\b(\d+\.\d+\.\d+\.\d+)`)

// ProbeVersion runs `bin --version` (at most 10 s) and returns the version it
// printed, e.g. "146.0.7680.177". A file that is not executable, fails to
// run or prints no Chromium version is ErrNotBrowser, with what it printed
// (at most 100 characters).
func ProbeVersion(ctx context.Context, bin string) (string, error) {
	if !isExecutableFile(bin) {
		return "", fmt.Errorf("%s: %w (not an executable regular file)", bin, ErrNotBrowser)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s --version: no answer within %s: %w", bin, probeTimeout, ErrNotBrowser)
	}
	m := chromiumVersionRE.FindStringSubmatch(out.String())
	if m == nil {
		said := strings.TrimSpace(out.String())
		if len(said) > 100 {
			said = said[:100] + "…"
		}
		switch {
		case err != nil && said == "":
			return "", fmt.Errorf("%s --version: %w: %w", bin, err, ErrNotBrowser)
		case err != nil:
			return "", fmt.Errorf("%s --version: %w, printed %q: %w", bin, err, said, ErrNotBrowser)
		}
		return "", fmt.Errorf("%s --version printed %q, not a Chromium version: %w", bin, said, ErrNotBrowser)
	}
	return m[2], nil
}
