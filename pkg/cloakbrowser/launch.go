package cloakbrowser

import (
	"slices"
	"strings"
)

// networkQuietArgs are the flags a browser needs on a closed network: without
// them Chromium keeps dialling Google services that never answer.
var networkQuietArgs = []string{
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--no-first-run",
	"--disable-quic",
}

// NetworkQuietArgs returns a fresh copy of the flags a browser needs on a
// closed network (without them Chromium keeps dialling Google services that
// never answer); the caller may append to it.
func NetworkQuietArgs() []string { return slices.Clone(networkQuietArgs) }

// LaunchOptions are the parts of a browser command line a server chooses.
type LaunchOptions struct {
	// NoSandbox adds --no-sandbox (needed as root).
	NoSandbox bool
	// FingerprintSeed fixes CloakBrowser's --fingerprint seed. If zero, random.
	FingerprintSeed int
	// Window, if set, sizes the browser window and its screen (WindowArgs).
	Window *Window
	// Headless says the browser runs without a window (for Window's screen).
	Headless bool
	// ExtraArgs are appended last and override earlier flags of the same
	// name (the value lists of --enable-features, --disable-features and
	// --disable-blink-features are merged instead).
	ExtraArgs []string
}

// LaunchArgs is the browser command line for bin (without the flags
// Playwright adds itself): the closed-network flags, --no-sandbox when
// asked, --disable-blink-features=AutomationControlled and
// --disable-features=RenderDocument,SpareRendererForSitePerProcess (every
// engine), the stealth flags for
// a CloakBrowser binary, the window, then the extra args.
// A later --flag replaces an earlier one of the same name, except the
// feature lists, which are merged (DedupeArgs). Extra args keep
// pages off the internal DevTools ports: those ports are taken out of an
// --explicitly-allowed-ports list, and MAP rules onto them out of
// --host-resolver-rules and --host-rules; the rest of each is kept.
func LaunchArgs(bin BinaryInfo, o LaunchOptions) []string {
	args := NetworkQuietArgs()
	if o.NoSandbox {
		args = append(args, "--no-sandbox")
	}
	args = append(args, automationArg, renderDocumentArg, spareRendererArg)
	args = append(args, StealthArgs(bin, o.FingerprintSeed, "")...)
	if o.Window != nil {
		args = append(args, WindowArgs(bin, *o.Window, o.Headless)...)
	}
	args = append(args, keepPagesOffInternalPorts(o.ExtraArgs)...)
	// Playwright passes its own --enable-features and --disable-features
	// lists before our flags, and Chromium reads the last occurrence only:
	// a list of ours carries Playwright's values too. (Without them a
	// user's --disable-features=X would turn back on, among others,
	// HTTPS upgrades of http:// URLs and the redirect handling that request
	// interception needs.)
	for _, l := range []struct{ flag, value string }{
		{"--enable-features", playwrightEnabledFeatures},
		{"--disable-features", strings.Join(playwrightDisabledFeatures, ",")},
	} {
		if slices.ContainsFunc(args, func(a string) bool { return flagName(a) == l.flag }) {
			args = append([]string{l.flag + "=" + l.value}, args...)
		}
	}
	return DedupeArgs(args)
}

// spareRendererArg stops Chromium from keeping a spare renderer process
// started ahead of the next navigation. A spare belongs to one browser
// context: with many contexts in one browser (HTTP sessions with context
// isolation) a navigation in another context discards it and the next is
// started, so the browser forked renderers it never used. Nothing a page
// can read changes (its renderer is the same program, started when its
// navigation needs it). Measured in docs/benchmarks.md ("the twenty-first
// stop"). DedupeArgs merges it into Playwright's list (LaunchArgs).
const spareRendererArg = "--disable-features=SpareRendererForSitePerProcess"

// playwrightEnabledFeatures is the --enable-features value the pinned
// Playwright passes by default (chromiumSwitches).
const playwrightEnabledFeatures = "CDPScreenshotNewSurface"

// playwrightDisabledFeatures is the --disable-features list the pinned
// Playwright passes by default (chromiumSwitches' disabledFeatures);
// TestPlaywrightFeatureLists compares both with the installed driver.
var playwrightDisabledFeatures = []string{
	"AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "DialMediaRouteProvider",
	"GlobalMediaControls", "HttpsUpgrades", "LensOverlay", "MediaRouter", "PaintHolding",
	"ThirdPartyStoragePartitioning", "BlockOriginHeaderModificationOnRedirect",
	"AvoidCorsURLLoaderRestartOnRedirect", "Translate", "AutoDeElevate", "OptimizationHints",
	"NetworkTimeServiceQuerying", "AimEnabled", "msForceBrowserSignIn",
	"msEdgeUpdateLaunchServicesPreferredVersion",
}

// listFlags take a comma-separated list that Chromium reads from one
// occurrence only: DedupeArgs merges their values instead of keeping the
// last.
var listFlags = map[string]bool{
	"--enable-features":        true,
	"--disable-features":       true,
	"--enable-blink-features":  true,
	"--disable-blink-features": true,
}

// DedupeArgs keeps the last occurrence of each --flag (by the part before
// '='), so later sources override earlier ones; the occurrences of a list
// flag (--enable-features, --disable-features, --enable-blink-features,
// --disable-blink-features) become one, at the last one's place, whose
// value is every value in order of first appearance, each once.
func DedupeArgs(args []string) []string {
	last := map[string]int{}
	lists := map[string][]string{}
	for i, a := range args {
		name := flagName(a)
		last[name] = i
		if listFlags[name] {
			_, v, _ := strings.Cut(a, "=")
			for _, item := range strings.Split(v, ",") {
				if item = strings.TrimSpace(item); item != "" && !slices.Contains(lists[name], item) {
					lists[name] = append(lists[name], item)
				}
			}
		}
	}
	out := make([]string, 0, len(args))
	for i, a := range args {
		name := flagName(a)
		if last[name] != i {
			continue
		}
		if listFlags[name] {
			if len(lists[name]) == 0 {
				continue // only empty values: nothing to enable or disable
			}
			a = name + "=" + strings.Join(lists[name], ",")
		}
		out = append(out, a)
	}
	return out
}

func flagName(a string) string {
	if i := strings.IndexByte(a, '='); i >= 0 {
		return a[:i]
	}
	return a
}

// LaunchFailure condenses Playwright's launch error text (the whole browser
// log) to its first line and the browser's fatal lines.
func LaunchFailure(msg string) string {
	lines := strings.Split(msg, "\n")
	out := []string{strings.TrimPrefix(lines[0], "playwright: ")}
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		if i := strings.Index(l, "FATAL:"); i >= 0 {
			m := l[i:]
			if j := strings.Index(m, "] "); j >= 0 {
				m = m[j+2:]
			}
			if !seen[m] {
				seen[m] = true
				out = append(out, "browser: "+m)
			}
		}
	}
	return strings.Join(out, "; ")
}
