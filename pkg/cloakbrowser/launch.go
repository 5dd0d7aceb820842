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
	// ExtraArgs are appended last and override earlier flags of the same name.
	ExtraArgs []string
}

// LaunchArgs is the browser command line for bin (without the flags
// Playwright adds itself): the closed-network flags, --no-sandbox when
// asked, the stealth flags for a CloakBrowser binary, then the extra args. A
// later --flag replaces an earlier one of the same name. Extra args keep
// pages off the internal DevTools ports: those ports are taken out of an
// --explicitly-allowed-ports list, and MAP rules onto them out of
// --host-resolver-rules and --host-rules; the rest of each is kept.
func LaunchArgs(bin BinaryInfo, o LaunchOptions) []string {
	args := NetworkQuietArgs()
	if o.NoSandbox {
		args = append(args, "--no-sandbox")
	}
	args = append(args, StealthArgs(bin, o.FingerprintSeed, "")...)
	args = append(args, keepPagesOffInternalPorts(o.ExtraArgs)...)
	return DedupeArgs(args)
}

// DedupeArgs keeps the last occurrence of each --flag (by the part before
// '='), so later sources override earlier ones.
func DedupeArgs(args []string) []string {
	last := map[string]int{}
	for i, a := range args {
		last[flagName(a)] = i
	}
	out := make([]string, 0, len(args))
	for i, a := range args {
		if last[flagName(a)] == i {
			out = append(out, a)
		}
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
