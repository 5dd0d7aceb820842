package cloakbrowser

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// StealthArgs returns the CloakBrowser fingerprint flags for a CloakBrowser
// binary: --fingerprint=<seed> and --fingerprint-platform=<persona>. A zero
// seed means a random one in 10000–99999 (the wrapper's range). An empty
// platformPersona means "macos" on darwin platforms and "windows" elsewhere
// (the wrapper's default; Linux hosts pose as Windows). For any other
// engine it returns nil: a plain Chromium does not know these flags, and
// passing them would only suggest a stealth that is not there.
//
// --no-sandbox is not included; the launcher adds it when running as root
// or when asked.
func StealthArgs(info BinaryInfo, seed int, platformPersona string) []string {
	if info.Engine != EngineCloak {
		return nil
	}
	if seed == 0 {
		seed = 10000 + rand.IntN(90000)
	}
	if platformPersona == "" {
		platformPersona = "windows"
		if strings.HasPrefix(info.Platform, "darwin-") {
			platformPersona = "macos"
		}
	}
	return []string{
		"--fingerprint=" + strconv.Itoa(seed),
		"--fingerprint-platform=" + platformPersona,
	}
}

// IgnoredDefaultArgs are Playwright's default Chromium flags to drop for any
// engine, each because a page can tell it:
//
//   - --enable-automation: sets navigator.webdriver and the infobar (the
//     CloakBrowser wrapper drops it; Playwright 1.64 no longer adds it).
//   - --enable-unsafe-swiftshader: software WebGL whose renderer string
//     ("SwiftShader") names a headless server (the wrapper drops it too).
//   - --hide-scrollbars (headless only): zero-width scrollbars, so a long
//     page's innerWidth equals its clientWidth, which no desktop Chrome on
//     Windows or Linux shows.
//
// Kept on purpose, from Playwright 1.64's headless defaults: --headless
// (the new headless mode is the real browser; its one tell, the
// "HeadlessChrome" user agent token, is rewritten per context), --mute-audio
// (no page can read the output's volume) and --blink-settings=
// primaryHoverType=2,…,primaryPointerType=4 (a fine pointer that hovers, as a
// desktop with a mouse reports; without it headless answers
// "(pointer: none)"). Playwright's other defaults (chromiumSwitches) switch
// off background services and throttling, which no page sees, and the
// driver needs them.
func IgnoredDefaultArgs() []string {
	return []string{"--enable-automation", "--enable-unsafe-swiftshader", "--hide-scrollbars"}
}
