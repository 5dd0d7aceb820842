package session_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// TestStealthWindowAndFits: a session sized by its window gets a common
// desktop window on its command line; it fits a shared browser whatever
// window either chose (the shared browser's is used), but not one whose
// pages are sized by an emulated viewport.
func TestStealthWindowAndFits(t *testing.T) {
	bin := cloakbrowser.BinaryInfo{BinaryPath: "/usr/bin/chromium", Engine: cloakbrowser.EngineChromium}
	base := session.Config{
		ResolveBinary: func(context.Context) (cloakbrowser.BinaryInfo, error) { return bin, nil },
		Headless:      true,
	}
	s := session.New("w", nil, base)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	cfg := s.Config()
	if cfg.Window == nil {
		t.Fatal("no window chosen")
	}
	args := cfg.Args(bin)
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--window-size=") }) ||
		!slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--screen-info=") }) ||
		!slices.Contains(args, "--disable-blink-features=AutomationControlled") {
		t.Errorf("args %q", args)
	}
	shared := session.NewSharedBrowser(nil, base)
	if shared.Window() == nil {
		t.Fatal("the shared browser chose no window")
	}
	other := base
	w := cloakbrowser.Window{ScreenWidth: 1111, ScreenHeight: 999, Taskbar: 40}
	other.Window = &w
	if !shared.Fits(t.Context(), other) {
		t.Error("a session with another window does not fit")
	}
	vp := base
	vp.Viewport = &page.Size{Width: 1280, Height: 720}
	if !shared.Fits(t.Context(), vp) {
		t.Error("a session with --viewport-size does not fit a shared browser with a window")
	}
	if a := vp.Args(bin); slices.ContainsFunc(a, cloakbrowser.IsWindowArg) {
		t.Errorf("--viewport-size still sizes the window: %q", a)
	}
	emulated := session.NewSharedBrowser(nil, vp)
	if emulated.Window() != nil || emulated.Fits(t.Context(), base) {
		t.Error("a session sized by its window fits a shared browser without one")
	}
}

// TestStealthReport: the protections a configuration has, as binary info
// and doctor report them.
func TestStealthReport(t *testing.T) {
	chromium := cloakbrowser.BinaryInfo{BinaryPath: "/usr/bin/chromium", Engine: cloakbrowser.EngineChromium}
	cloak := cloakbrowser.BinaryInfo{BinaryPath: "/c/chrome", Engine: cloakbrowser.EngineCloak}
	w := cloakbrowser.Window{ScreenWidth: 1536, ScreenHeight: 864, Taskbar: 40}
	cfg := session.Config{Headless: true, Window: &w}

	r := cfg.Stealth(chromium)
	if !r.AutomationFlagOff || !r.WebdriverFalse || !r.UAHeadlessFree || r.FingerprintPatches || !r.BrandsRisk ||
		r.Viewport != "window 1536x824 on a 1536x864 screen" || !slices.Equal(r.Overrides, []string{"userAgent"}) || !strings.Contains(r.Brands, "not Google Chrome") {
		t.Errorf("chromium: %+v", r)
	}
	if r := cfg.Stealth(cloak); !r.FingerprintPatches || r.BrandsRisk {
		t.Errorf("cloak: %+v", r)
	}

	tz := cfg
	tz.Context.TimezoneID, tz.Context.Locale = "Asia/Tokyo", "de-DE"
	r = tz.Stealth(chromium)
	if !slices.Contains(r.LaunchSettings, "TZ") || slices.Contains(r.Overrides, "timezone") || !slices.Contains(r.Overrides, "locale") {
		t.Errorf("own browser's time zone: %+v", r)
	}
	if r := tz.Stealth(cloak); !slices.Contains(r.LaunchSettings, "--fingerprint-timezone") {
		t.Errorf("cloak's time zone: %+v", r)
	}
	if a := tz.Args(cloak); !slices.Contains(a, "--fingerprint-timezone=Asia/Tokyo") {
		t.Errorf("cloak's time zone args: %q", a)
	}
	tz.Shared = session.NewSharedBrowser(nil, cfg)
	if r := tz.Stealth(chromium); !slices.Contains(r.Overrides, "timezone") {
		t.Errorf("a shared browser's context time zone is an override: %+v", r)
	}

	vp := cfg
	vp.Viewport = &page.Size{Width: 1280, Height: 720}
	if r := vp.Stealth(chromium); r.Viewport != "emulated 1280x720 (--viewport-size)" || !slices.Contains(r.Overrides, "viewport") {
		t.Errorf("viewport: %+v", r)
	}
	headed := cfg
	headed.Headless = false
	if r := headed.Stealth(chromium); len(r.Overrides) != 0 || !r.UAHeadlessFree || !strings.Contains(r.Viewport, "maximized") {
		t.Errorf("headed: %+v", r)
	}
}

// TestStealthWarnings: combinations a page can see disagree are named.
func TestStealthWarnings(t *testing.T) {
	var c session.Config
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("defaults warn: %q", w)
	}
	c.Context.UserAgent = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"
	c.Context.Device = "iPhone 15"
	c.Viewport = &page.Size{Width: 800, Height: 600}
	w := strings.Join(c.Warnings(), "\n")
	for _, want := range []string{"names no Chrome version", `replaces the user agent of --device "iPhone 15"`, "--viewport-size 800x600 replaces the viewport"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
}
