package session_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// TestWebMCPLaunchArgsAndFits: a session with WebMCP launches with
// --enable-features=WebMCP in one list with Playwright's own feature and
// the user's; it does not fit a shared browser launched without the flag
// (its pages would have no modelContext), nor one without WebMCP a
// browser launched with it (its pages would carry the fingerprint).
func TestWebMCPLaunchArgsAndFits(t *testing.T) {
	bin := cloakbrowser.BinaryInfo{BinaryPath: "/usr/bin/chromium", Engine: cloakbrowser.EngineChromium}
	base := session.Config{
		ResolveBinary: func(context.Context) (cloakbrowser.BinaryInfo, error) { return bin, nil },
		Headless:      true,
		ExtraArgs:     []string{"--enable-features=Mine"},
	}
	features := func(args []string) []string {
		var out []string
		for _, a := range args {
			if strings.HasPrefix(a, "--enable-features") {
				out = append(out, a)
			}
		}
		return out
	}
	with := base
	with.WebMCP = true
	if got := features(with.Args(bin)); !slices.Equal(got, []string{"--enable-features=CDPScreenshotNewSurface,Mine,WebMCP"}) {
		t.Errorf("with WebMCP: %q", got)
	}
	if got := features(base.Args(bin)); !slices.Equal(got, []string{"--enable-features=CDPScreenshotNewSurface,Mine"}) {
		t.Errorf("without: %q", got)
	}
	plain := base
	plain.ExtraArgs = nil
	if got := features(plain.Args(bin)); len(got) != 0 {
		t.Errorf("no feature asked for, yet %q (Playwright's own stands)", got)
	}
	without := session.NewSharedBrowser(nil, base)
	if !without.Fits(t.Context(), base) {
		t.Fatal("the same configuration does not fit")
	}
	if without.Fits(t.Context(), with) {
		t.Error("a WebMCP session fits a browser launched without the flag")
	}
	if session.NewSharedBrowser(nil, with).Fits(t.Context(), base) {
		t.Error("a session without WebMCP fits a browser launched with it")
	}
}
