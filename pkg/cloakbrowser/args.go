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
// engine: --enable-automation (sets navigator.webdriver and the infobar)
// and --enable-unsafe-swiftshader, as the CloakBrowser wrapper does.
func IgnoredDefaultArgs() []string {
	return []string{"--enable-automation", "--enable-unsafe-swiftshader"}
}
