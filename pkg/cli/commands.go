package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/progress"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/server"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/tools"
)

// VersionString describes this build (`cloakbrowser-mcp version`).
func VersionString() string {
	return fmt.Sprintf("cloakbrowser-mcp %s (playwright %s, @playwright/mcp %s tools, CloakBrowser pin %s, %s/%s, %s)",
		server.Version, driver.PlaywrightVersion, tools.UpstreamVersion, cloakbrowser.PinnedVersion, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// InstallOptions select what install installs and requires.
type InstallOptions struct {
	// DriverOnly installs the Playwright driver only (--driver-only).
	DriverOnly bool
	// RequireCloakBrowser makes a CloakBrowser that could not be installed
	// an error (exit 1) even when a system Chromium would serve instead
	// (--require-cloakbrowser). If false, install then exits 0 and says
	// which browser the server will use.
	RequireCloakBrowser bool
}

// Install (`cloakbrowser-mcp install`) installs the Playwright driver and,
// unless o.DriverOnly, the CloakBrowser binary. It returns the process exit
// code: 0 when the server can work — CloakBrowser installed, or (unless
// o.RequireCloakBrowser) not installable but a system Chromium answers in
// its place, which it states —, else 1. The archive download shows a
// progress bar when stderr is a terminal (no colour under NO_COLOR) and a
// plain line at every 10% or 5 s otherwise.
func Install(ctx context.Context, cfg config.Config, o InstallOptions, stdout, stderr io.Writer) int {
	dopts := server.DriverOptions(cfg, stderr)
	if _, err := driver.Check(ctx, dopts); errors.Is(err, driver.ErrNotInstalled) {
		fmt.Fprintf(stderr, "driver: installing playwright-core %s from the npm registry\n", driver.PlaywrightVersion)
	}
	info, err := driver.Install(ctx, dopts)
	if err != nil {
		fmt.Fprintf(stderr, "driver: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "driver: playwright-core %s in %s (node %s at %s)\n", info.Version, info.Dir, info.NodeVersion, info.NodePath)
	if o.DriverOnly {
		return 0
	}
	co := server.CloakOptions(cfg)
	co.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, "browser: "+format+"\n", args...) }
	po := progress.ForTerminal(stderr, os.Getenv)
	co.Progress = func(what string, total int64) cloakbrowser.ProgressReporter { return progress.New(po, what, total) }
	// The CloakBrowser wrappers' escape hatch for a mirror without signed
	// SHA256SUMS; honoured only with CLOAKBROWSER_DOWNLOAD_URL, and logged
	// as a WARNING.
	co.SkipChecksum = os.Getenv("CLOAKBROWSER_SKIP_CHECKSUM") == "true"
	bin, err := cloakbrowser.Install(ctx, co)
	if err == nil {
		fmt.Fprintf(stdout, "browser: CloakBrowser %s at %s\n", bin.Version, bin.BinaryPath)
		return 0
	}
	fmt.Fprintf(stderr, "browser: CloakBrowser not installed: %v\n", err)
	const retry = "run `cloakbrowser-mcp install` again with network access (or set CLOAKBROWSER_DOWNLOAD_URL to a mirror)"
	if tampered(err) || ctx.Err() != nil {
		// A verification failure is a tampering signal, never papered over.
		fmt.Fprintf(stderr, "next: %s\n", retry)
		return 1
	}
	sys, serr := cloakbrowser.Resolve(ctx, cloakbrowser.Options{AllowDownload: false, BinaryPath: cfg.BinaryPath, BinaryPathSource: cfg.BinaryPathSource,
		DownloadOffReason: "its download failed"})
	var version string
	if serr == nil {
		version, serr = cloakbrowser.ProbeVersion(ctx, sys.BinaryPath)
	}
	switch {
	case serr != nil:
		fmt.Fprintf(stderr, "browser: no other browser to fall back on: %v\n", serr)
		fmt.Fprintf(stderr, "next: %s\n", cloakbrowser.NextStep)
		return 1
	case o.RequireCloakBrowser:
		fmt.Fprintf(stderr, "browser: --require-cloakbrowser: %s (%s) would serve, but CloakBrowser is required\n", sys.BinaryPath, sys.Engine)
		fmt.Fprintf(stderr, "next: %s\n", retry)
		return 1
	}
	fmt.Fprintf(stdout, "browser: fallback: the server will use %s (%s %s, source %s) WITHOUT CloakBrowser's stealth patches\n", sys.BinaryPath, sys.Engine, version, sys.Source)
	fmt.Fprintf(stderr, "next: %s to get CloakBrowser; pass --require-cloakbrowser to make its absence an error\n", retry)
	return 0
}

// tampered reports a CloakBrowser download that failed its verification.
func tampered(err error) bool {
	for _, e := range []error{cloakbrowser.ErrBadSignature, cloakbrowser.ErrChecksumMismatch, cloakbrowser.ErrVersionMismatch, cloakbrowser.ErrUnsafeArchive} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// DoctorOptions select what doctor checks.
type DoctorOptions struct {
	// JSON prints the report as JSON.
	JSON bool
	// Launch starts the browser once to prove it works.
	Launch bool
}

// DoctorReport is what doctor found.
type DoctorReport struct {
	OK      bool                     `json:"ok"`
	Version string                   `json:"version"`
	Driver  driver.Info              `json:"driver"`
	Binary  *cloakbrowser.BinaryInfo `json:"binary,omitempty"`
	// BrowserVersion is what the binary answered to --version.
	BrowserVersion string       `json:"browserVersion,omitempty"`
	Launch         *LaunchCheck `json:"launch,omitempty"`
	Problems       []string     `json:"problems"`
	Notes          []string     `json:"notes"`
}

// downloadCheckTimeout bounds doctor's question to the download origin.
const downloadCheckTimeout = 5 * time.Second

// LaunchCheck is the result of launching the browser once.
type LaunchCheck struct {
	OK             bool   `json:"ok"`
	BrowserVersion string `json:"browserVersion,omitempty"`
	Ms             int64  `json:"ms"`
	Error          string `json:"error,omitempty"`
}

// Doctor (`cloakbrowser-mcp doctor`) reports what the server would use, from where and why, and
// exits non-zero when the server could not work.
func Doctor(ctx context.Context, cfg config.Config, o DoctorOptions, stdout, stderr io.Writer) int {
	r := DoctorReport{Version: server.Version, Problems: []string{}, Notes: []string{}}
	if err := cfg.Validate(); err != nil {
		r.Problems = append(r.Problems, "config: "+err.Error())
	}
	dinfo, derr := driver.Check(ctx, server.DriverOptions(cfg, stderr))
	r.Driver = dinfo
	if derr != nil {
		r.Problems = append(r.Problems, "driver: "+derr.Error())
	}
	co := server.CloakOptions(cfg)
	serverDownloads := co.AllowDownload
	co.AllowDownload = false // doctor only looks
	bin, berr := cloakbrowser.Resolve(ctx, co)
	// Not installed on a platform CloakBrowser builds for (CacheDir set),
	// and the server would download it: whether it then gets CloakBrowser
	// or falls back on this Chromium depends on the download origin
	// answering, so ask it (no archive is fetched).
	wouldDownload := berr == nil && bin.Source == cloakbrowser.SourceSystem && bin.CacheDir != "" && serverDownloads
	var downloadErr error
	if wouldDownload {
		cctx, cancel := context.WithTimeout(ctx, downloadCheckTimeout)
		downloadErr = cloakbrowser.CheckDownload(cctx, co)
		cancel()
		co.DownloadOffReason = "doctor does not download (the server will, at its first browser launch)"
		if downloadErr != nil {
			co.DownloadOffReason = "doctor does not download, and the server could not either: " + downloadErr.Error()
		}
		bin, berr = cloakbrowser.Resolve(ctx, co)
	}
	if berr != nil {
		r.Problems = append(r.Problems, "browser: "+berr.Error())
	} else {
		sp := server.LaunchConfig(cfg, bin).Stealth(bin)
		bin.StealthProtections = &sp
		r.Binary = &bin
		switch {
		case bin.Source != cloakbrowser.SourceSystem:
		case wouldDownload && downloadErr == nil:
			r.Notes = append(r.Notes, "CloakBrowser is not installed yet: the server downloads it at its first browser launch (its download origin answers), or run `cloakbrowser-mcp install` now; until then doctor checks the system Chromium")
		case wouldDownload:
			r.Notes = append(r.Notes, "the server will use a system Chromium without CloakBrowser's stealth patches: "+bin.FallbackReason+
				"; run `cloakbrowser-mcp install` with network access (or set CLOAKBROWSER_DOWNLOAD_URL to a mirror) to get CloakBrowser")
		default:
			r.Notes = append(r.Notes, "using a system Chromium without CloakBrowser's stealth patches: "+bin.FallbackReason+"; run `cloakbrowser-mcp install` to get CloakBrowser now")
		}
		// A file that is not a browser fails a launch with "target
		// closed"; ask it for its version first.
		if v, err := cloakbrowser.ProbeVersion(ctx, bin.BinaryPath); err != nil {
			berr = err
			r.Problems = append(r.Problems, "browser: "+err.Error()+"; pass a Chromium with --binary-path")
		} else {
			r.BrowserVersion = v
		}
	}
	if o.Launch && derr == nil && berr == nil {
		r.Launch = launchCheck(ctx, cfg, bin, stderr)
		if !r.Launch.OK {
			r.Problems = append(r.Problems, "launch: "+r.Launch.Error)
		}
	}
	r.OK = len(r.Problems) == 0
	if o.JSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		printDoctor(stdout, r)
	}
	if !r.OK {
		return 1
	}
	return 0
}

func launchCheck(ctx context.Context, cfg config.Config, bin cloakbrowser.BinaryInfo, log io.Writer) *LaunchCheck {
	start := time.Now()
	drv := driver.Start(server.DriverOptions(cfg, log), false)
	defer drv.Close()
	sess := session.New("doctor", drv, server.LaunchConfig(cfg, bin))
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = sess.Close(ctx)
	}()
	lc := &LaunchCheck{}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	g, err := sess.Generation(ctx)
	if err == nil {
		lc.BrowserVersion = g.BrowserVersion()
		lc.OK = true
	} else {
		lc.Error = err.Error()
	}
	lc.Ms = time.Since(start).Milliseconds()
	return lc
}

func printDoctor(w io.Writer, r DoctorReport) {
	status := "OK"
	if !r.OK {
		status = "NOT OK"
	}
	fmt.Fprintf(w, "cloakbrowser-mcp %s: %s\n", r.Version, status)
	fmt.Fprintf(w, "driver:  dir=%s installed=%v version=%s node=%s (%s)\n", r.Driver.Dir, r.Driver.Installed, r.Driver.Version, r.Driver.NodePath, r.Driver.NodeVersion)
	if b := r.Binary; b != nil {
		line := fmt.Sprintf("browser: %s engine=%s source=%s stealth=%v", b.BinaryPath, b.Engine, b.Source, b.Stealth)
		if b.Version != "" { // a CloakBrowser version; a system Chromium has none
			line += " version=" + b.Version
		}
		if r.BrowserVersion != "" {
			line += " answers=" + r.BrowserVersion
		}
		fmt.Fprintln(w, line)
		for _, t := range b.Tried {
			fmt.Fprintf(w, "  tried: %s\n", t)
		}
		if sp := b.StealthProtections; sp != nil {
			fmt.Fprintf(w, "stealth: automationFlagOff=%v webdriverFalse=%v uaHeadlessFree=%v fingerprintPatches=%v viewport=%q overrides=%v\n",
				sp.AutomationFlagOff, sp.WebdriverFalse, sp.UAHeadlessFree, sp.FingerprintPatches, sp.Viewport, sp.Overrides)
			fmt.Fprintf(w, "  brands: %s\n", sp.Brands)
			for _, k := range sp.Risks {
				fmt.Fprintf(w, "  risk: %s\n", k)
			}
		}
	}
	if l := r.Launch; l != nil {
		fmt.Fprintf(w, "launch:  ok=%v browser=%s in %d ms\n", l.OK, l.BrowserVersion, l.Ms)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note:    %s\n", n)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", strings.TrimSpace(p))
	}
}
