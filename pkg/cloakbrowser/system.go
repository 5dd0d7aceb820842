package cloakbrowser

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// DefaultSystemCandidates returns the fallback browsers looked for when
// Options.SystemCandidates is nil, for the running OS.
func DefaultSystemCandidates() []string {
	switch runtime.GOOS {
	case "darwin":
		return []string{
			"/Applications/Chromium.app/Contents/MacOS/Chromium",
			"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
			"chromium", "google-chrome",
		}
	case "windows":
		return []string{
			`C:\Program Files\Google\Chrome\Application\chrome.exe`,
			`C:\Program Files (x86)\Google\Chrome\Application\chrome.exe`,
			"chrome.exe", "chromium.exe",
		}
	}
	return []string{
		"chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
		"/usr/lib/chromium/chromium", "/usr/bin/chromium", "/snap/bin/chromium",
	}
}

// system falls back to the first system Chromium found. reason says why
// CloakBrowser is not used; it is the returned error's cause when no system
// Chromium is found either.
func (r *resolver) system(reason error) (BinaryInfo, error) {
	for _, c := range r.candidates {
		p, why := findCandidate(c)
		if p == "" {
			r.tried = append(r.tried, fmt.Sprintf("system: %s: %s", c, why))
			continue
		}
		info := BinaryInfo{
			BundledVersion: PinnedVersionFor(r.platform),
			Tier:           "free",
			Platform:       r.platform,
			BinaryPath:     p,
			Installed:      true,
			CacheRoot:      r.cacheRoot,
			Source:         SourceSystem,
			Engine:         EngineChromium,
			Tried:          r.tried,
			FallbackReason: reason.Error(),
		}
		if r.platformErr == nil {
			info.CacheDir = r.versionDir()
			info.DownloadURL = redactURL(r.downloadURL(r.base))
		}
		return info, nil
	}
	if len(r.candidates) == 0 {
		r.tried = append(r.tried, "system: no candidates configured")
	}
	return BinaryInfo{}, fmt.Errorf("%w: %w; tried: %s. Next: %s", ErrNotFound, reason, strings.Join(r.tried, "; "), NextStep)
}

// findCandidate resolves a candidate: a path (absolute or containing a
// separator) must be an executable regular file; a bare name is looked up in
// PATH.
func findCandidate(c string) (path, why string) {
	if filepath.IsAbs(c) || strings.ContainsRune(c, filepath.Separator) {
		fi, err := os.Stat(c)
		switch {
		case err != nil:
			return "", "not found"
		case !fi.Mode().IsRegular():
			return "", "not a regular file"
		case !isExecutableFile(c):
			return "", "not executable"
		}
		abs, err := filepath.Abs(c)
		if err != nil {
			return "", err.Error()
		}
		return abs, ""
	}
	p, err := exec.LookPath(c)
	if err != nil {
		return "", "not found in PATH"
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p, ""
}
