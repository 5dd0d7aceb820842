package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/atomicfile"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
)

// What a page could tell of the automation, and how a launch avoids it:
//
//   - The window: with no --viewport-size and no --device, a browser of
//     ours has no viewport emulation; its window is a common desktop size
//     (Config.Window, chosen once per session, or once per shared
//     browser), so screen, outer and inner sizes agree as on a desktop.
//   - The user agent: a headless Chromium says "HeadlessChrome/<v>"; a
//     context gets the same browser's headed user agent instead (read once
//     per binary), through Playwright's userAgent option, which reaches
//     every page, frame and worker and keeps the binary's own brands and
//     full version list in navigator.userAgentData and Sec-CH-UA.
//   - The time zone: a browser of our own gets it at launch (TZ, or
//     CloakBrowser's --fingerprint-timezone), not a DevTools override.

// wantsWindow reports whether the page is sized by the browser window (no
// viewport and no device emulated).
func (c Config) wantsWindow() bool { return c.Viewport == nil && c.Context.Device == "" }

// withWindow is c with a window chosen when it needs one and has none.
func (c Config) withWindow() Config {
	if c.Window == nil && c.wantsWindow() {
		w := cloakbrowser.PickWindow()
		c.Window = &w
	}
	return c
}

// wantsHeadfulUA reports whether contexts get the binary's headed user
// agent: headless, and no user agent of the user's or a device's.
func (c Config) wantsHeadfulUA() bool {
	return c.Headless && c.Context.UserAgent == "" && c.Context.Device == ""
}

// contextUA is the user agent a context is created with: the user's, else
// headful when the headed one is wanted; "" for the browser's (or the
// device's) own.
func (c Config) contextUA(headful string) string {
	if c.Context.UserAgent != "" {
		return c.Context.UserAgent
	}
	if c.wantsHeadfulUA() {
		return headful
	}
	return ""
}

// launchTimezone reports whether the time zone is set at launch rather
// than by Playwright's override: a browser of our own (not shared, not
// remote) whose environment is ours to set.
func (c Config) launchTimezone() bool {
	return c.Context.TimezoneID != "" && c.Shared == nil && c.CDPEndpoint == "" && c.Endpoint == "" && c.PickEndpoint == nil
}

// timezoneArgs and timezoneEnv carry a launch-level time zone: CloakBrowser
// takes its own flag, any Chromium the TZ variable.
func (c Config) timezoneArgs(bin cloakbrowser.BinaryInfo) []string {
	if !c.launchTimezone() || bin.Engine != cloakbrowser.EngineCloak {
		return nil
	}
	return []string{"--fingerprint-timezone=" + c.Context.TimezoneID}
}

// userAgents caches each binary's headed user agent (uaKey): reading it
// from a persistent launch's binary costs a launch of its own. It is also
// kept on disk (uaCacheFile), so that only the first process to launch a
// binary pays that launch, not every cold start.
var userAgents sync.Map

// uaCacheFile is where the headed user agent of bin, read with key
// (uaKey), is kept across processes: a file under the binary cache root
// named by key and the binary's size and modification time, so a binary
// replaced in place is read again. "" when there is no cache root or the
// binary cannot be identified (a channel's browser).
func uaCacheFile(bin cloakbrowser.BinaryInfo, key string) string {
	if bin.CacheRoot == "" || bin.BinaryPath == "" {
		return ""
	}
	fi, err := os.Stat(bin.BinaryPath)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", key, fi.Size(), fi.ModTime().UnixNano()))
	return filepath.Join(bin.CacheRoot, "user-agents", hex.EncodeToString(sum[:12])+".json")
}

// cachedUA is the file format of uaCacheFile. UserAgent is "" for a
// binary whose own user agent has no headless token.
type cachedUA struct {
	UserAgent string `json:"userAgent"`
}

// loadCachedUA reads a user agent kept by storeCachedUA; ok is false when
// there is none, or what is there is not a user agent (nothing but
// printable ASCII, at most maxUALength bytes, a browser's "Mozilla/5.0 ").
func loadCachedUA(path string) (ua string, ok bool) {
	if path == "" {
		return "", false
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 2*maxUALength {
		return "", false
	}
	var c cachedUA
	if json.Unmarshal(b, &c) != nil || !plausibleUA(c.UserAgent) {
		return "", false
	}
	return c.UserAgent, true
}

// maxUALength bounds a user agent read from the disk cache.
const maxUALength = 512

func plausibleUA(ua string) bool {
	if ua == "" {
		return true
	}
	if len(ua) > maxUALength || !strings.HasPrefix(ua, "Mozilla/5.0 ") {
		return false
	}
	for i := 0; i < len(ua); i++ {
		if ua[i] < 0x20 || ua[i] > 0x7e {
			return false
		}
	}
	return true
}

// storeCachedUA keeps ua at path, written whole (a reader sees the old
// file or the new one); a cache root that cannot be written costs the
// next process a probe launch, nothing else.
func storeCachedUA(path, ua string) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(cachedUA{UserAgent: ua})
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, 0o600, b)
}

func uaKey(bin cloakbrowser.BinaryInfo, channel string, args []string) string {
	var k []string
	for _, a := range args {
		if strings.HasPrefix(a, "--fingerprint") || strings.HasPrefix(a, "--user-agent") {
			k = append(k, a)
		}
	}
	return bin.BinaryPath + "\x00" + channel + "\x00" + strings.Join(k, " ")
}

// browserUserAgent reads the user agent br sends by default, within ctx
// and 15 s.
func browserUserAgent(ctx context.Context, br playwright.Browser) (string, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, 15*time.Second, errors.New("Browser.getVersion did not answer within 15s"))
	defer cancel()
	return bounded(ctx, func() (string, error) {
		s, err := br.NewBrowserCDPSession()
		if err != nil {
			return "", err
		}
		// Not detached: the session goes with the browser, and a Detach
		// sent as the browser closes (a session of a few seconds) would
		// never be answered (the driver drops such a child session's
		// pending calls), leaving this goroutine behind.
		v, err := s.Send("Browser.getVersion", nil)
		if err != nil {
			return "", err
		}
		m, _ := v.(map[string]any)
		ua, _ := m["userAgent"].(string)
		if ua == "" {
			return "", errors.New("Browser.getVersion gave no user agent")
		}
		return ua, nil
	})
}

// headfulUserAgent is the headed user agent of a browser just launched,
// "" when its own has no headless token (or it cannot be read: the
// browser's own is kept, and logged).
func (c Config) headfulFrom(ctx context.Context, br playwright.Browser) (string, error) {
	ua, err := browserUserAgent(ctx, br)
	if err != nil {
		c.Log.Warn().Err(err).Msg("read the browser's user agent: contexts keep the browser's own (HeadlessChrome)")
		return "", err
	}
	return headfulOf(ua), nil
}

// headfulOf is the headed user agent of raw, the one a headless browser
// sends: "" when raw has no headless token.
func headfulOf(raw string) string {
	h, changed := cloakbrowser.HeadfulUserAgent(raw)
	if !changed {
		return ""
	}
	return h
}

// probeUserAgent is the headed user agent of the binary a persistent
// launch is about to start, read once per binary from a short headless
// launch of it (a persistent context's user agent is fixed at launch).
func (c Config) probeUserAgent(ctx context.Context, pw *playwright.Playwright, bin cloakbrowser.BinaryInfo, args []string) string {
	key := uaKey(bin, c.Launch.Channel, args)
	if ua, ok := cachedUserAgent(bin, key); ok {
		return ua
	}
	opts := playwright.BrowserTypeLaunchOptions{
		ExecutablePath:    playwright.String(bin.BinaryPath),
		Headless:          playwright.Bool(true),
		Args:              args,
		IgnoreDefaultArgs: cloakbrowser.IgnoredDefaultArgs(),
		Env:               browserEnv(),
		Timeout:           playwright.Float(float64(c.launchTimeout().Milliseconds())),
	}
	if c.Launch.Channel != "" {
		opts.Channel = playwright.String(c.Launch.Channel)
		opts.ExecutablePath = nil
	}
	br, err := pw.Chromium.Launch(opts)
	if err != nil {
		c.Log.Warn().Err(err).Msg("read the browser's user agent: the context keeps the browser's own (HeadlessChrome)")
		return ""
	}
	defer func() { _ = br.Close() }()
	ua, err := c.headfulFrom(ctx, br)
	if err != nil {
		return ""
	}
	return c.keepUserAgent(bin, key, ua)
}

// Warnings are the combinations of settings the user asked for that a page
// can see disagree; they are applied as asked, and logged once per session.
func (c Config) Warnings() []string {
	var w []string
	ua := c.Context.UserAgent
	if ua != "" && !strings.Contains(ua, "Chrome/") {
		w = append(w, fmt.Sprintf("--user-agent %q names no Chrome version, but navigator.userAgentData and Sec-CH-UA keep the browser's own Chromium brands: a page can see the two disagree", ua))
	}
	if ua != "" && c.Context.Device != "" {
		w = append(w, fmt.Sprintf("--user-agent replaces the user agent of --device %q; the device's viewport, touch and mobile flags stay: a page can see them disagree if the user agent is another device's", c.Context.Device))
	}
	if c.Viewport != nil && c.Context.Device != "" {
		w = append(w, fmt.Sprintf("--viewport-size %dx%d replaces the viewport of --device %q: its screen and user agent stay", c.Viewport.Width, c.Viewport.Height, c.Context.Device))
	}
	return w
}

var chromeMajor = regexp.MustCompile(`Chrome/(\d+)\.`)

// versionWarning says when a user agent's Chrome version is not the
// browser's, whose brands and client hints tell its real one; "" when they
// agree or either is unknown.
func versionWarning(ua, browserVersion string) string {
	m := chromeMajor.FindStringSubmatch(ua)
	major, _, _ := strings.Cut(browserVersion, ".")
	if m == nil || major == "" || m[1] == major {
		return ""
	}
	return fmt.Sprintf("--user-agent says Chrome %s but the browser is version %s: navigator.userAgentData and Sec-CH-UA report %s, and a page can see them disagree", m[1], browserVersion, major)
}

// warnVersion logs, once per session, a --user-agent whose Chrome version
// is not g's browser's.
func (s *Session) warnVersion(g *Generation) {
	if s.cfg.Context.UserAgent == "" || !s.versionWarned.CompareAndSwap(false, true) {
		return
	}
	if w := versionWarning(s.cfg.Context.UserAgent, g.BrowserVersion()); w != "" {
		s.log.Warn().Msg(w)
	}
}

// Stealth reports the protections a session configured with c has with
// bin (cloakbrowser_binary_info's and doctor's "stealthProtections").
func (c Config) Stealth(bin cloakbrowser.BinaryInfo) cloakbrowser.StealthReport {
	remote := c.CDPEndpoint != "" || c.Endpoint != "" || c.PickEndpoint != nil
	r := cloakbrowser.StealthReport{
		AutomationFlagOff:  !remote,
		WebdriverFalse:     !remote,
		FingerprintPatches: bin.Engine == cloakbrowser.EngineCloak,
		Overrides:          []string{},
		LaunchSettings:     []string{},
		Risks:              []string{},
	}
	r.Brands, r.BrandsRisk = cloakbrowser.BrandsFor(bin)
	if r.BrandsRisk {
		r.Risks = append(r.Risks, "userAgentData brands name Chromium, not Google Chrome")
	}
	switch {
	case c.Context.UserAgent != "":
		r.UserAgent = "--user-agent (Playwright's userAgent option: an Emulation.setUserAgentOverride per page and worker)"
		r.UAHeadlessFree = !strings.Contains(c.Context.UserAgent, "HeadlessChrome")
		r.Overrides = append(r.Overrides, "userAgent")
	case c.Context.Device != "":
		r.UserAgent = "the device's (--device)"
		r.UAHeadlessFree = true
		r.Overrides = append(r.Overrides, "userAgent", "deviceMetrics", "touch")
	case c.Headless:
		r.UserAgent = "the binary's headed user agent (HeadlessChrome → Chrome), set per context with the binary's own brands"
		r.UAHeadlessFree = true
		r.Overrides = append(r.Overrides, "userAgent")
	default:
		r.UserAgent = "the binary's own (headed)"
		r.UAHeadlessFree = true
	}
	if remote {
		r.UserAgent = "the remote browser's own"
		r.UAHeadlessFree = false
		r.Risks = append(r.Risks, "an attached browser keeps its own launch flags (navigator.webdriver, user agent)")
	}
	switch {
	case c.Context.Device != "":
		r.Viewport = fmt.Sprintf("device %q (emulated)", c.Context.Device)
		if c.Viewport != nil {
			r.Viewport = fmt.Sprintf("device %q with an emulated %dx%d viewport", c.Context.Device, c.Viewport.Width, c.Viewport.Height)
		}
	case c.Viewport != nil:
		r.Viewport = fmt.Sprintf("emulated %dx%d (--viewport-size)", c.Viewport.Width, c.Viewport.Height)
		r.Overrides = append(r.Overrides, "viewport")
	case remote:
		r.Viewport = "the remote browser's"
	case !c.Headless && bin.Engine != cloakbrowser.EngineCloak:
		r.Viewport = "a window maximized on the display's own screen"
		r.LaunchSettings = append(r.LaunchSettings, "--start-maximized")
	case c.Window != nil:
		r.Viewport = c.Window.String()
		r.LaunchSettings = append(r.LaunchSettings, "--window-size")
	default:
		r.Viewport = "the browser window (chosen per session)"
	}
	if c.Context.Locale != "" {
		r.Overrides = append(r.Overrides, "locale")
	}
	if c.Context.TimezoneID != "" {
		if c.launchTimezone() {
			if bin.Engine == cloakbrowser.EngineCloak {
				r.LaunchSettings = append(r.LaunchSettings, "--fingerprint-timezone")
			} else {
				r.LaunchSettings = append(r.LaunchSettings, "TZ")
			}
		} else {
			r.Overrides = append(r.Overrides, "timezone")
		}
	}
	if c.Context.Geolocation != nil {
		r.Overrides = append(r.Overrides, "geolocation")
	}
	for _, o := range []struct {
		on   bool
		name string
	}{{c.Context.ColorScheme != "", "colorScheme"}, {c.Context.ReducedMotion != "", "reducedMotion"}, {c.Context.DeviceScaleFactor > 0, "deviceScaleFactor"},
		{c.Context.IsMobile != nil, "isMobile"}, {c.Context.HasTouch != nil, "hasTouch"}, {c.Context.BypassCSP, "bypassCSP"}} {
		if o.on {
			r.Overrides = append(r.Overrides, o.name)
		}
	}
	if !r.FingerprintPatches {
		r.Risks = append(r.Risks, "no native fingerprint patches (canvas, WebGL, audio, fonts are the machine's own): use the CloakBrowser binary")
	}
	return r
}
