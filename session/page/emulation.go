package page

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/mxschmitt/playwright-go"
)

// Emulation of a device, locale, timezone, media features and a position.
// Timezone, locale and device need context options in Playwright; here they
// go through the tab's CDP session instead, so the browser and its state
// stay. Geolocation is the browser context's (Playwright has no per-page
// override that survives navigation).

// ErrUnknownTimezone means the browser's ICU does not know a timezone name.
var ErrUnknownTimezone = errors.New("unknown timezone")

// emulationState is what the server overrides on a tab through CDP (a device,
// locale, timezone); the overrides live as long as the tab. The fields are
// guarded by the tab's mutex.
type emulationState struct {
	// turn serializes the tab's emulation changes, which take several
	// browser calls each; made on first use.
	turn chan struct{}
	// userAgent is the device's user agent; "" when no device is emulated.
	userAgent string
	// viewport is the tab's viewport before the device, to restore (nil when
	// it followed the window).
	viewport *Size
	// locale is the locale override; "" for none.
	locale string
	// mobile is the device's mobile flag (userAgentData.mobile).
	mobile bool
}

// Size is a width and height in CSS pixels.
type Size struct {
	Width, Height int
}

// Device is one of Playwright's device descriptors.
type Device struct {
	UserAgent string
	// Viewport is the device's viewport; nil when it has none.
	Viewport *Size
	// Screen is the device's screen; nil when Playwright gives none.
	Screen            *Size
	DeviceScaleFactor float64
	IsMobile          bool
	HasTouch          bool
}

// Geolocation is a position the browser reports.
type Geolocation struct {
	Latitude, Longitude float64
	// Accuracy is in meters; nil for Playwright's default (0).
	Accuracy *float64
}

// MediaOptions are the media features EmulateMedia changes. A nil field
// leaves that feature as it is; a pointer to "" ends its override.
type MediaOptions struct {
	// ColorScheme is "light", "dark" or "no-preference".
	ColorScheme *string
	// ReducedMotion is "reduce" or "no-preference".
	ReducedMotion *string
	// ForcedColors is "active" or "none".
	ForcedColors *string
	// Contrast is "more" or "no-preference".
	Contrast *string
	// Media is the CSS media type, "screen" or "print".
	Media *string
}

// emulationTurn waits, within ctx, until no other emulation change of the
// tab runs, so the saved viewport and the user agent stay consistent. It is
// no mutex: a browser call in a change ends with ctx or the browser, and
// so does the wait.
func (t *Tab) emulationTurn(ctx context.Context) (release func(), err error) {
	t.mu.Lock()
	if t.emulation.turn == nil {
		t.emulation.turn = make(chan struct{}, 1)
	}
	turn := t.emulation.turn
	t.mu.Unlock()
	select {
	case turn <- struct{}{}:
		return func() { <-turn }, nil
	case <-ctx.Done():
		return nil, ctxErr("wait for another emulation change of the tab", ctx.Err())
	}
}

// cdpStep sends a DevTools command on the tab's CDP session; its error
// names the command.
func (t *Tab) cdpStep(ctx context.Context, method string, params map[string]any) error {
	defer t.invalidateWatch() // what the page sees changed
	if _, err := t.CDP(ctx, method, params); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// EmulateDevice makes the tab look like d: Playwright's viewport (which
// screenshots use), then the device's scale factor, mobile flag, touch and
// user agent. The viewport the tab had before the first device is kept for
// ClearDevice.
func (t *Tab) EmulateDevice(ctx context.Context, d Device) error {
	if d.Viewport == nil {
		return errors.New("the device has no viewport")
	}
	release, err := t.emulationTurn(ctx)
	if err != nil {
		return err
	}
	defer release()
	w, h := d.Viewport.Width, d.Viewport.Height
	t.mu.Lock()
	first := t.emulation.userAgent == ""
	t.mu.Unlock()
	if first {
		var saved *Size
		if vw, vh, ok := t.viewportSize(); ok {
			saved = &Size{Width: vw, Height: vh}
		}
		t.mu.Lock()
		t.emulation.viewport = saved
		t.mu.Unlock()
	}
	if err := t.SetViewportSize(ctx, w, h); err != nil {
		return err
	}
	metrics := map[string]any{"width": w, "height": h, "deviceScaleFactor": d.DeviceScaleFactor, "mobile": d.IsMobile}
	if d.Screen != nil {
		metrics["screenWidth"], metrics["screenHeight"] = d.Screen.Width, d.Screen.Height
	}
	if err := t.cdpStep(ctx, "Emulation.setDeviceMetricsOverride", metrics); err != nil {
		return err
	}
	if err := t.cdpStep(ctx, "Emulation.setTouchEmulationEnabled", map[string]any{"enabled": d.HasTouch, "maxTouchPoints": 5}); err != nil {
		return err
	}
	t.mu.Lock()
	t.emulation.userAgent, t.emulation.mobile = d.UserAgent, d.IsMobile
	t.mu.Unlock()
	return t.applyUserAgent(ctx)
}

// ClearDevice ends a device emulation: the browser's metrics, touch and
// user agent, and the viewport the tab had before. emulated is false when
// no device was emulated (nothing is done then).
func (t *Tab) ClearDevice(ctx context.Context) (emulated bool, err error) {
	release, err := t.emulationTurn(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	t.mu.Lock()
	ua, vp, locale := t.emulation.userAgent, t.emulation.viewport, t.emulation.locale
	t.mu.Unlock()
	if ua == "" {
		return false, nil
	}
	if err := t.cdpStep(ctx, "Emulation.clearDeviceMetricsOverride", nil); err != nil {
		return true, err
	}
	if err := t.cdpStep(ctx, "Emulation.setTouchEmulationEnabled", map[string]any{"enabled": false}); err != nil {
		return true, err
	}
	if vp != nil {
		if err := t.SetViewportSize(ctx, vp.Width, vp.Height); err != nil {
			return true, err
		}
	}
	t.mu.Lock()
	t.emulation.userAgent, t.emulation.viewport, t.emulation.mobile = "", nil, false
	t.mu.Unlock()
	// Back to the context's own user agent (an empty one ends the override,
	// which would bring back a headless browser's HeadlessChrome); a locale
	// keeps its own.
	if err := t.cdpStep(ctx, "Emulation.setUserAgentOverride", userAgentParams(t.c.env.UserAgent, "", false)); err != nil {
		return true, err
	}
	if locale != "" {
		if err := t.applyUserAgent(ctx); err != nil {
			return true, err
		}
	}
	return true, nil
}

// applyUserAgent sets the user agent and Accept-Language from the device and
// locale overrides together (CDP has one call for both).
func (t *Tab) applyUserAgent(ctx context.Context) error {
	t.mu.Lock()
	ua, locale, mobile := t.emulation.userAgent, t.emulation.locale, t.emulation.mobile
	t.mu.Unlock()
	if ua == "" {
		ua = t.c.env.UserAgent // the context's own
	}
	if ua == "" {
		// No device: keep the user agent the page has.
		v, err := t.Read(ctx, "() => navigator.userAgent")
		if err != nil {
			return fmt.Errorf("read the user agent: %w", err)
		}
		ua, _ = v.(string)
	}
	return t.cdpStep(ctx, "Emulation.setUserAgentOverride", userAgentParams(ua, locale, mobile))
}

// userAgentParams is an Emulation.setUserAgentOverride for ua ("" ends the
// override) with client-hint metadata that agrees with it: the platform the
// user agent names and the mobile flag. The brands are left out, so the
// browser fills in its own (the binary's identity, never spoofed here).
func userAgentParams(ua, locale string, mobile bool) map[string]any {
	params := map[string]any{"userAgent": ua}
	if locale != "" {
		params["acceptLanguage"] = locale
	}
	if ua == "" {
		return params
	}
	md := map[string]any{"platform": "", "platformVersion": "", "architecture": "x86", "model": "", "mobile": mobile}
	switch m := uaPlatform.FindStringSubmatch(ua); {
	case strings.Contains(ua, "Android"):
		md["platform"], md["architecture"] = "Android", "arm"
	case strings.Contains(ua, "iPhone") || strings.Contains(ua, "iPad"):
		md["platform"], md["architecture"] = "iOS", "arm"
	case strings.Contains(ua, "Mac OS X"):
		md["platform"] = "macOS"
	case strings.Contains(ua, "Windows"):
		md["platform"] = "Windows"
		if m != nil {
			md["platformVersion"] = m[1]
		}
	case strings.Contains(ua, "CrOS"):
		md["platform"] = "Chrome OS"
	case strings.Contains(ua, "Linux"):
		md["platform"] = "Linux"
	}
	params["userAgentMetadata"] = md
	return params
}

var uaPlatform = regexp.MustCompile(`Windows NT (\d+(?:\.\d+)?)`)

// SetLocale overrides the tab's locale (navigator.language, Intl) and its
// Accept-Language header; "" restores the default.
func (t *Tab) SetLocale(ctx context.Context, locale string) error {
	release, err := t.emulationTurn(ctx)
	if err != nil {
		return err
	}
	defer release()
	if err := t.cdpStep(ctx, "Emulation.setLocaleOverride", map[string]any{"locale": locale}); err != nil {
		return fmt.Errorf("locale %q: %w", locale, err)
	}
	t.mu.Lock()
	t.emulation.locale = locale
	t.mu.Unlock()
	return t.applyUserAgent(ctx)
}

// SetTimezone overrides the tab's timezone (an IANA name); "" restores the
// system timezone. A name the browser does not know fails with
// ErrUnknownTimezone.
func (t *Tab) SetTimezone(ctx context.Context, tz string) error {
	if tz != "" {
		// Chromium takes unknown names without a word; its ICU knows better.
		ok, err := t.Read(ctx, `tz => { try { Intl.DateTimeFormat(undefined, { timeZone: tz }); return true } catch { return false } }`, tz)
		if err == nil && ok == false {
			return fmt.Errorf("timezone %q: %w", tz, ErrUnknownTimezone)
		}
	}
	return t.cdpStep(ctx, "Emulation.setTimezoneOverride", map[string]any{"timezoneId": tz})
}

// EmulateMedia changes the media features the tab's page sees.
func (t *Tab) EmulateMedia(ctx context.Context, o MediaOptions) error {
	var po playwright.PageEmulateMediaOptions
	if o.ColorScheme != nil {
		po.ColorScheme = enumValue[playwright.ColorScheme](*o.ColorScheme)
	}
	if o.ReducedMotion != nil {
		po.ReducedMotion = enumValue[playwright.ReducedMotion](*o.ReducedMotion)
	}
	if o.ForcedColors != nil {
		po.ForcedColors = enumValue[playwright.ForcedColors](*o.ForcedColors)
	}
	if o.Contrast != nil {
		po.Contrast = enumValue[playwright.Contrast](*o.Contrast)
	}
	if o.Media != nil {
		po.Media = enumValue[playwright.Media](*o.Media)
	}
	defer t.invalidateWatch() // media queries may show or hide elements
	return run(ctx, t.c, "emulate media", stopOn{modal: t}, func() error { return t.p.EmulateMedia(po) })
}

// enumValue is Playwright's value for a media feature: "" is "no-override".
func enumValue[E ~string](s string) *E {
	if s == "" {
		s = "no-override"
	}
	v := E(s)
	return &v
}

// OpenCDP opens the tab's CDP session if it is not open yet, so a later
// command (e.g. Runtime.terminateExecution for a runaway script) needs no
// attach while the page is busy.
func (t *Tab) OpenCDP(ctx context.Context) error {
	_, err := t.cdpSession(ctx)
	return err
}
