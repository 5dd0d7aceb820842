package cloakbrowser

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// automationArg turns off the Blink feature behind navigator.webdriver
// (true whenever the browser is driven over a DevTools pipe or headless).
// Upstream adds it for every Chromium; DedupeArgs merges it with a
// --disable-blink-features of the user's.
const automationArg = "--disable-blink-features=AutomationControlled"

// renderDocumentArg keeps a tab's RenderFrameHost across its same-site
// navigations (Chromium's RenderDocument makes a new one for each). With a
// new one, the page's first script read outerWidth and outerHeight 0 (the
// window's rectangle had not reached the new document yet) in 9 of 48
// same-site navigations and 4 of 10 first navigations of a fresh headless
// browser (Playwright alone, Chromium 156); without, in none of 48 and 10:
// a size of 0 is what detectors take for an old headless browser.
// DedupeArgs merges it into Playwright's list (LaunchArgs).
const renderDocumentArg = "--disable-features=RenderDocument"

// Window is a desktop screen and the browser window on it: a maximized
// window over a taskbar, as most desktops show one.
type Window struct {
	// ScreenWidth and ScreenHeight are screen.width and screen.height.
	ScreenWidth, ScreenHeight int
	// Taskbar is the height the taskbar takes off the screen's bottom
	// (screen.availHeight is ScreenHeight-Taskbar).
	Taskbar int
}

// Width and Height are the window's outer size (outerWidth, outerHeight).
func (w Window) Width() int  { return w.ScreenWidth }
func (w Window) Height() int { return w.ScreenHeight - w.Taskbar }

func (w Window) String() string {
	return fmt.Sprintf("window %dx%d on a %dx%d screen", w.Width(), w.Height(), w.ScreenWidth, w.ScreenHeight)
}

// windows are the most common desktop screen sizes (at a device pixel
// ratio of 1), each with a Windows taskbar.
var windows = []Window{
	{1920, 1080, 40},
	{1536, 864, 40},
	{1440, 900, 40},
	{1366, 768, 40},
}

// PickWindow chooses a common desktop window at random.
func PickWindow() Window { return windows[rand.IntN(len(windows))] }

// WindowArgs is the command line that gives the browser window w: its size
// and position, and the screen it stands on: a headless Chromium's
// --screen-info (its default screen is 800x600, smaller than the window),
// and for CloakBrowser its own --fingerprint-screen-* flags too (headless,
// both: the headless screen itself then has the size the fingerprint
// reports, so nothing that reads the screen outside the patched properties
// sees 800x600; a build that ignores one of them still gets the other). A
// headed system Chromium stands on the real screen, whose size w may not
// be: its window is maximized there instead.
func WindowArgs(bin BinaryInfo, w Window, headless bool) []string {
	if !headless && bin.Engine != EngineCloak {
		return []string{"--start-maximized"}
	}
	args := []string{
		fmt.Sprintf("--window-size=%d,%d", w.Width(), w.Height()),
		"--window-position=0,0",
	}
	if bin.Engine == EngineCloak {
		args = append(args,
			fmt.Sprintf("--fingerprint-screen-width=%d", w.ScreenWidth),
			fmt.Sprintf("--fingerprint-screen-height=%d", w.ScreenHeight),
			fmt.Sprintf("--fingerprint-taskbar-height=%d", w.Taskbar))
	}
	if headless {
		args = append(args, fmt.Sprintf("--screen-info={0,0 %dx%d workAreaBottom=%d}", w.ScreenWidth, w.ScreenHeight, w.Taskbar))
	}
	return args
}

// IsWindowArg reports whether a is one of the flags WindowArgs makes (a
// session's own window choice, which a shared browser's replaces).
func IsWindowArg(a string) bool {
	switch flagName(a) {
	case "--window-size", "--window-position", "--screen-info", "--start-maximized",
		"--fingerprint-screen-width", "--fingerprint-screen-height", "--fingerprint-taskbar-height":
		return true
	}
	return false
}

// HeadfulUserAgent is ua as the same browser sends it with a window: a
// headless Chromium says "HeadlessChrome/<version>" where a headed one says
// "Chrome/<version>"; nothing else differs. changed is false when ua has no
// headless token.
func HeadfulUserAgent(ua string) (headful string, changed bool) {
	if !strings.Contains(ua, "HeadlessChrome/") {
		return ua, false
	}
	return strings.ReplaceAll(ua, "HeadlessChrome/", "Chrome/"), true
}

// StealthReport says which of the protections against automation
// detection are active for a binary and a configuration: the
// cloakbrowser_binary_info and doctor --json "stealthProtections" object,
// beside the binary's "stealth" bool.
type StealthReport struct {
	// AutomationFlagOff: --enable-automation is dropped and
	// AutomationControlled is disabled.
	AutomationFlagOff bool `json:"automationFlagOff"`
	// WebdriverFalse: navigator.webdriver reads false.
	WebdriverFalse bool `json:"webdriverFalse"`
	// UAHeadlessFree: no "HeadlessChrome" in the user agent, its header or
	// navigator.userAgentData.
	UAHeadlessFree bool `json:"uaHeadlessFree"`
	// UserAgent says where the user agent comes from.
	UserAgent string `json:"userAgent"`
	// Brands says which browser the userAgentData brands name, and whether
	// that is a fingerprint risk.
	Brands string `json:"brands"`
	// BrandsRisk is true when the brands do not name "Google Chrome" (the
	// binary's identity: reported, never spoofed).
	BrandsRisk bool `json:"brandsRisk"`
	// Viewport is what sizes the page: "window WxH on a WxH screen" (no
	// emulation), or the emulated viewport or device.
	Viewport string `json:"viewport"`
	// Overrides lists the DevTools emulation overrides in force for every
	// page (a page can notice some of them); empty when none.
	Overrides []string `json:"overrides"`
	// LaunchSettings lists what is set on the browser's command line or
	// environment instead of an override.
	LaunchSettings []string `json:"launchSettings"`
	// FingerprintPatches: the binary patches fingerprints natively
	// (CloakBrowser).
	FingerprintPatches bool `json:"fingerprintPatches"`
	// Risks lists what a page can still tell, in words.
	Risks []string `json:"risks"`
}

// BrandsFor says what the userAgentData brands of bin name. A CloakBrowser
// build names Google Chrome natively; any other Chromium names itself
// ("Chromium"), which anti-bot checks flag: reported, not spoofed (a CDP
// brand override can disagree with the binary's real features).
func BrandsFor(bin BinaryInfo) (text string, risk bool) {
	if bin.Engine == EngineCloak {
		return "Google Chrome (CloakBrowser sets the brands natively)", false
	}
	return "Chromium (not Google Chrome: a fingerprint risk; the brands are the binary's own and are not spoofed)", true
}
