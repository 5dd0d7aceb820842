package cloakbrowser

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Environment variables read when the matching Options field is empty. They
// are the CloakBrowser wrapper's own names, so a cache and pins shared with
// the Python/Node wrappers keep working.
const (
	EnvBinaryPath  = "CLOAKBROWSER_BINARY_PATH"
	EnvCacheDir    = "CLOAKBROWSER_CACHE_DIR"
	EnvVersion     = "CLOAKBROWSER_VERSION"
	EnvDownloadURL = "CLOAKBROWSER_DOWNLOAD_URL"
)

// DefaultDownloadBase is the primary download origin; GitHubReleasesBase is
// the fallback used only when no custom download URL is configured.
const (
	DefaultDownloadBase = "https://cloakbrowser.dev"
	GitHubReleasesBase  = "https://github.com/CloakHQ/cloakbrowser/releases/download"
)

// pinnedSigningKeys are the base64 Ed25519 public keys that sign the
// official SHA256SUMS manifests (the wrapper's BINARY_SIGNING_PUBKEYS). They
// are the trust root of download verification, so they are unexported: a
// caller (or a test) trusting another key says so in Options.PublicKeys.
var pinnedSigningKeys = []string{"MKFKwIhUcKWq5xTuNA0Ovg99njcDEcEJvmWYYhApvaU="}

// PinnedSigningKeys returns a copy of the base64 Ed25519 public keys that
// sign the official SHA256SUMS manifests (the wrapper's
// BINARY_SIGNING_PUBKEYS); changing it changes nothing.
func PinnedSigningKeys() []string { return slices.Clone(pinnedSigningKeys) }

// Sources and engines reported in BinaryInfo.
const (
	SourceFlag     = "flag"
	SourceEnv      = "env"
	SourceCache    = "cache"
	SourceDownload = "download"
	SourceSystem   = "system"

	EngineCloak    = "cloak"
	EngineChromium = "chromium"
)

// Sentinel errors callers can branch on with errors.Is. The first four are
// tampering signals: Resolve never falls back to a system Chromium after one.
var (
	ErrBadSignature     = errors.New("bad SHA256SUMS signature")
	ErrChecksumMismatch = errors.New("archive checksum does not match the signed SHA256SUMS")
	ErrVersionMismatch  = errors.New("signed SHA256SUMS declares a different version")
	ErrUnsafeArchive    = errors.New("archive contains an unsafe entry")
	// ErrManifestUnavailable means SHA256SUMS or SHA256SUMS.sig could not be
	// fetched; the archive is then not used (fail closed).
	ErrManifestUnavailable = errors.New("signed SHA256SUMS unavailable")
	// ErrNotFound means no usable binary: a missing explicit binary path, or
	// nothing found anywhere Resolve looked.
	ErrNotFound = errors.New("browser binary not found")
)

// Options configure Resolve and Install. Every field is optional.
type Options struct {
	// BinaryPath is an explicit browser binary (--binary-path or
	// CLOAKBROWSER_BINARY_PATH). It must be a readable regular file, else
	// Resolve fails; it is never silently skipped. If empty,
	// CLOAKBROWSER_BINARY_PATH is read (source "env").
	BinaryPath string
	// BinaryPathSource is "flag" or "env" and is only reported. If empty and
	// BinaryPath is set, "flag".
	BinaryPathSource string
	// CacheDir is the cache root. If empty, $CLOAKBROWSER_CACHE_DIR, else
	// ~/.cloakbrowser (on every OS, like the wrappers).
	CacheDir string
	// Version is an exact pin such as "146.0.7680.177.5". If empty,
	// $CLOAKBROWSER_VERSION; if that is empty too, the version named by the
	// latest_version_<platform> marker when it is newer than the built-in pin
	// and installed, else PinnedVersionFor(platform). A set value must match
	// ^[0-9]+(\.[0-9]+){3,4}$.
	Version string
	// DownloadURL is a mirror base URL (http or https, no query). If empty,
	// $CLOAKBROWSER_DOWNLOAD_URL; if still empty, DefaultDownloadBase with
	// GitHubReleasesBase as fallback. A custom URL disables the fallback.
	DownloadURL string
	// AllowDownload lets Resolve download a missing binary. Install always
	// downloads. If false, Resolve goes from the cache straight to the system
	// Chromium.
	AllowDownload bool
	// SkipChecksum skips the SHA256SUMS signature and checksum checks, and is
	// honoured only together with a custom DownloadURL (like the wrapper's
	// CLOAKBROWSER_SKIP_CHECKSUM=true). It is not read from the environment:
	// the caller maps that variable deliberately.
	SkipChecksum bool
	// PublicKeys verify SHA256SUMS.sig. If nil, the pinned keys (see
	// PinnedSigningKeys).
	PublicKeys []ed25519.PublicKey
	// HTTPClient fetches archives and manifests. If nil, a client with a
	// 10-minute timeout.
	HTTPClient *http.Client
	// SystemCandidates are the fallback browsers, by name (looked up in PATH)
	// or absolute path, in order. If nil, DefaultSystemCandidates(); an empty
	// non-nil slice disables the fallback.
	SystemCandidates []string
	// Platform is a platform tag (see Platforms). If empty, detected; an
	// explicit unsupported value is an error. A detected unsupported platform
	// makes Resolve skip the cache and download and use the system fallback.
	Platform string
	// Logf receives progress messages. If nil, nothing is logged. URLs are
	// logged without credentials or query strings.
	Logf func(format string, args ...any)
	// Progress, if set, reports the archive download (what names it, total
	// is its size or <= 0 when unknown); the reporter gets every byte and
	// then Close. If nil, Logf gets a line at every 10%.
	Progress func(what string, total int64) ProgressReporter
	// DownloadOffReason says why AllowDownload is false, in Tried and
	// FallbackReason (doctor: "doctor does not download"). If empty,
	// "downloads are disabled".
	DownloadOffReason string
	// Getenv reads environment variables. If nil, os.Getenv.
	Getenv func(key string) string
}

// BinaryInfo says which binary was resolved and why. Its JSON holds the
// fields of the CloakBrowser wrapper's binaryInfo() (the bridge's `binary`
// object) plus source, engine, stealth, tried and fallbackReason.
type BinaryInfo struct {
	// Version is the CloakBrowser version, or "" when unknown (a system
	// Chromium, or an explicit binary outside the cache layout).
	Version string `json:"version"`
	// BundledVersion is the built-in pin for Platform.
	BundledVersion string `json:"bundledVersion"`
	// Tier is always "free": Pro builds are not supported.
	Tier     string `json:"tier"`
	Platform string `json:"platform"`
	// BinaryPath is the executable to launch.
	BinaryPath string `json:"binaryPath"`
	// Installed reports whether BinaryPath exists.
	Installed bool `json:"installed"`
	// CacheDir is the per-version directory (<cache>/chromium-<ver>) the
	// CloakBrowser build lives in, or would live in; "" for an explicit
	// binary of unknown version.
	CacheDir string `json:"cacheDir"`
	// CacheRoot is the cache root holding all versions and markers.
	CacheRoot string `json:"cacheRoot"`
	// DownloadURL is the archive URL used, or the one that would be used,
	// without credentials.
	DownloadURL string `json:"downloadUrl"`
	// Source is "flag", "env", "cache", "download" or "system".
	Source string `json:"source"`
	// Engine is "cloak" for a CloakBrowser build, else "chromium".
	Engine string `json:"engine"`
	// Stealth is true only for a CloakBrowser build (Engine "cloak").
	Stealth bool `json:"stealth"`
	// StealthProtections, when reported (cloakbrowser_binary_info, doctor),
	// says which protections against automation detection are active for
	// this binary and the server's configuration.
	StealthProtections *StealthReport `json:"stealthProtections,omitempty"`
	// Tried lists each place looked at before the one used, with why it was
	// not used. Never nil.
	Tried []string `json:"tried"`
	// FallbackReason says why a system Chromium is used; empty otherwise.
	FallbackReason string `json:"fallbackReason"`
}

// Resolve finds the browser binary, in order: the explicit BinaryPath, the
// cache, a download (only if AllowDownload), then a system Chromium, which is
// reported as such (Engine "chromium", Stealth false, FallbackReason set);
// the caller says so (Logf gets progress, not the result, so a server that
// logs the result logs its reason once). A failed verification (bad signature, checksum, version or unsafe
// archive) is returned as an error rather than falling back, since it is a
// tampering signal; a download that merely fails (network, 404) falls back.
// When nothing is found the error wraps ErrNotFound and lists everything
// tried.
func Resolve(ctx context.Context, o Options) (BinaryInfo, error) {
	r, err := newResolver(o)
	if err != nil {
		return BinaryInfo{}, err
	}
	if r.binaryPath != "" {
		return r.explicit()
	}
	if r.platformErr != nil {
		r.tried = append(r.tried, fmt.Sprintf("cloakbrowser: %v", r.platformErr))
		return r.system(fmt.Errorf("no CloakBrowser build for this platform (%w)", r.platformErr))
	}
	if info, ok := r.cached(); ok {
		return info, nil
	}
	var reason error
	if r.allowDownload {
		info, err := r.download(ctx)
		if err == nil {
			return info, nil
		}
		if isTampering(err) || ctx.Err() != nil {
			return BinaryInfo{}, err
		}
		// The cause is in reason; saying it in tried too would repeat it.
		r.tried = append(r.tried, "download: failed")
		reason = fmt.Errorf("CloakBrowser %s is not in %s and its download failed: %w", r.version, r.versionDir(), err)
	} else {
		why := r.downloadOff
		if why == "" {
			why = "downloads are disabled"
		}
		r.tried = append(r.tried, "download: not attempted")
		reason = fmt.Errorf("CloakBrowser %s is not in %s and %s", r.version, r.versionDir(), why)
	}
	return r.system(reason)
}

// Install makes sure the CloakBrowser build is in the cache, downloading and
// verifying it if absent. It ignores BinaryPath and AllowDownload and never
// falls back to a system Chromium.
func Install(ctx context.Context, o Options) (BinaryInfo, error) {
	r, err := newResolver(o)
	if err != nil {
		return BinaryInfo{}, err
	}
	if r.platformErr != nil {
		return BinaryInfo{}, fmt.Errorf("install CloakBrowser: %w", r.platformErr)
	}
	if info, ok := r.cached(); ok {
		return info, nil
	}
	return r.download(ctx)
}

// resolver holds Options after defaults and validation.
type resolver struct {
	binaryPath, binarySource string
	cacheRoot                string
	version                  string
	explicitVersion          bool // Version came from Options or the environment
	platform                 string
	platformErr              error // detected platform unsupported
	base                     string
	custom                   bool
	allowDownload            bool
	skipChecksum             bool
	keys                     []ed25519.PublicKey
	client                   *http.Client
	candidates               []string
	logf                     func(string, ...any)
	progress                 func(string, int64) ProgressReporter
	downloadOff              string
	tried                    []string
	limits                   limits
}

func newResolver(o Options) (*resolver, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	r := &resolver{
		allowDownload: o.AllowDownload,
		client:        o.HTTPClient,
		candidates:    o.SystemCandidates,
		logf:          o.Logf,
		progress:      o.Progress,
		downloadOff:   o.DownloadOffReason,
		tried:         []string{},
		limits:        defaultLimits,
	}
	if r.logf == nil {
		r.logf = func(string, ...any) {}
	}
	if r.client == nil {
		r.client = &http.Client{Timeout: 10 * time.Minute}
	}
	if r.candidates == nil {
		r.candidates = DefaultSystemCandidates()
	}

	r.binaryPath, r.binarySource = o.BinaryPath, o.BinaryPathSource
	if r.binaryPath == "" {
		if v := getenv(EnvBinaryPath); v != "" {
			r.binaryPath, r.binarySource = v, SourceEnv
		}
	}
	if r.binaryPath != "" && r.binarySource == "" {
		r.binarySource = SourceFlag
	}

	r.platform = o.Platform
	if r.platform == "" {
		p, err := DetectPlatform()
		if err != nil {
			r.platformErr = err
			p = runtime.GOOS + "-" + runtime.GOARCH
		}
		r.platform = p
	} else if !validPlatform(r.platform) {
		return nil, fmt.Errorf("platform %q is not supported: use one of %s", r.platform, strings.Join(Platforms(), ", "))
	}

	r.cacheRoot = o.CacheDir
	if r.cacheRoot == "" {
		r.cacheRoot = getenv(EnvCacheDir)
	}
	if r.cacheRoot == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("find the CloakBrowser cache: set %s: %w", EnvCacheDir, err)
		}
		r.cacheRoot = filepath.Join(home, ".cloakbrowser")
	}
	abs, err := filepath.Abs(r.cacheRoot)
	if err != nil {
		return nil, fmt.Errorf("cache dir %q: %w", r.cacheRoot, err)
	}
	r.cacheRoot = abs

	switch {
	case o.Version != "":
		if !ValidVersion(o.Version) {
			return nil, fmt.Errorf("browser version %q is not an exact version like %s", o.Version, PinnedVersion)
		}
		r.version, r.explicitVersion = o.Version, true
	case getenv(EnvVersion) != "":
		v := getenv(EnvVersion)
		if !ValidVersion(v) {
			return nil, fmt.Errorf("%s=%q is not an exact version like %s", EnvVersion, v, PinnedVersion)
		}
		r.version, r.explicitVersion = v, true
	}

	r.base = o.DownloadURL
	if r.base == "" {
		r.base = getenv(EnvDownloadURL)
	}
	if r.base != "" {
		if err := checkBaseURL(r.base); err != nil {
			return nil, err
		}
		r.base = strings.TrimRight(r.base, "/")
		r.custom = true
	} else {
		r.base = DefaultDownloadBase
	}
	r.skipChecksum = o.SkipChecksum && r.custom

	if o.PublicKeys != nil {
		r.keys = o.PublicKeys
	} else {
		r.keys = pinnedKeys()
	}

	if r.platformErr == nil && !r.explicitVersion && r.binaryPath == "" {
		r.version = r.effectiveVersion()
	}
	return r, nil
}

func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		// The *url.Error quotes the URL, credentials included: keep only
		// its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			return fmt.Errorf("download URL (%s) is not a valid URL: %w", EnvDownloadURL, ue.Err)
		}
		return fmt.Errorf("download URL (%s) is not a valid URL", EnvDownloadURL)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("download URL %q (%s) must be an http(s) base URL without query or fragment", redactURL(s), EnvDownloadURL)
	}
	return nil
}

// effectiveVersion is the wrapper's getEffectiveVersion: the marker's
// version when it is newer than the built-in pin and installed, else the pin.
func (r *resolver) effectiveVersion() string {
	pin := PinnedVersionFor(r.platform)
	marker := filepath.Join(r.cacheRoot, markerName(r.platform))
	f, err := os.Open(marker)
	if err != nil {
		return pin
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 256))
	v := strings.TrimSpace(string(b))
	switch {
	case !ValidVersion(v):
		r.tried = append(r.tried, fmt.Sprintf("marker %s: %q is not a version; ignored", marker, v))
	case compareVersions(v, pin) <= 0:
		// Not newer than the pin: nothing to report.
	case !r.installedAt(v):
		r.tried = append(r.tried, fmt.Sprintf("marker %s: names %s, newer than the pin %s but not installed; ignored", marker, v, pin))
	default:
		return v
	}
	return pin
}

func (r *resolver) versionDirFor(v string) string {
	return filepath.Join(r.cacheRoot, versionDirName(v))
}
func (r *resolver) versionDir() string { return r.versionDirFor(r.version) }
func (r *resolver) binaryFor(v string) string {
	return filepath.Join(r.versionDirFor(v), binaryRelPath(r.platform))
}

func (r *resolver) installedAt(v string) bool { return isExecutableFile(r.binaryFor(v)) }

// isExecutableFile reports a regular file that the OS would run (any x bit
// outside Windows).
func isExecutableFile(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0
}

func (r *resolver) downloadURL(base string) string {
	return DownloadURLFor(base, r.version, r.platform)
}

// cloakInfo describes the CloakBrowser build of r.version.
func (r *resolver) cloakInfo(source string) BinaryInfo {
	bin := r.binaryFor(r.version)
	return BinaryInfo{
		Version:        r.version,
		BundledVersion: PinnedVersionFor(r.platform),
		Tier:           "free",
		Platform:       r.platform,
		BinaryPath:     bin,
		Installed:      fileExists(bin),
		CacheDir:       r.versionDir(),
		CacheRoot:      r.cacheRoot,
		DownloadURL:    redactURL(r.downloadURL(r.base)),
		Source:         source,
		Engine:         EngineCloak,
		Stealth:        true,
		Tried:          r.tried,
	}
}

func (r *resolver) cached() (BinaryInfo, bool) {
	bin := r.binaryFor(r.version)
	if isExecutableFile(bin) {
		return r.cloakInfo(SourceCache), true
	}
	why := "not installed"
	if fileExists(bin) {
		why = "present but not an executable regular file"
	}
	r.tried = append(r.tried, fmt.Sprintf("cache: %s: %s", bin, why))
	return BinaryInfo{}, false
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// explicit validates BinaryPath. We cannot tell from the file whether it is
// a CloakBrowser build, and claiming stealth for a plain Chromium would be a
// lie, so the engine is "cloak" only when the path has the cache layout
// (…/chromium-<version>[-pro]/<binary>) or a version was declared
// (Options.Version or CLOAKBROWSER_VERSION, as the wrapper's docs ask of
// CLOAKBROWSER_BINARY_PATH users); otherwise "chromium" without stealth.
func (r *resolver) explicit() (BinaryInfo, error) {
	p := r.binaryPath
	what := fmt.Sprintf("browser binary %q (from %s)", p, r.binarySource)
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return BinaryInfo{}, fmt.Errorf("%s: %w: %w", what, ErrNotFound, err)
		}
		return BinaryInfo{}, fmt.Errorf("%s: %w", what, err)
	}
	if !fi.Mode().IsRegular() {
		return BinaryInfo{}, fmt.Errorf("%s is not a regular file (mode %s)", what, fi.Mode().Type())
	}
	if !isExecutableFile(p) {
		return BinaryInfo{}, fmt.Errorf("%s: %w (mode %s, no execute bit)", what, ErrNotBrowser, fi.Mode().Perm())
	}
	f, err := os.Open(p)
	if err != nil {
		return BinaryInfo{}, fmt.Errorf("%s is not readable: %w", what, err)
	}
	f.Close()
	abs, err := filepath.Abs(p)
	if err != nil {
		return BinaryInfo{}, fmt.Errorf("%s: %w", what, err)
	}

	info := BinaryInfo{
		BundledVersion: PinnedVersionFor(r.platform),
		Tier:           "free",
		Platform:       r.platform,
		BinaryPath:     abs,
		Installed:      true,
		CacheRoot:      r.cacheRoot,
		Source:         r.binarySource,
		Engine:         EngineChromium,
		Tried:          r.tried,
	}
	if dir, v, ok := cacheLayoutVersion(abs); ok {
		info.Version, info.CacheDir = v, dir
	}
	if r.explicitVersion {
		info.Version = r.version
	}
	if info.Version != "" {
		info.Engine, info.Stealth = EngineCloak, true
		if r.platformErr == nil {
			info.DownloadURL = redactURL(DownloadURLFor(r.base, info.Version, r.platform))
		}
	}
	return info, nil
}

// cacheLayoutVersion recognises <dir>/chromium-<ver>[-pro]/{chrome,
// chrome.exe, Chromium.app/Contents/MacOS/Chromium}.
func cacheLayoutVersion(bin string) (dir, version string, ok bool) {
	var d string
	switch filepath.Base(bin) {
	case "chrome", "chrome.exe":
		d = filepath.Dir(bin)
	case "Chromium":
		d = filepath.Dir(bin) // MacOS
		if filepath.Base(d) != "MacOS" || filepath.Base(filepath.Dir(d)) != "Contents" || filepath.Base(filepath.Dir(filepath.Dir(d))) != "Chromium.app" {
			return "", "", false
		}
		d = filepath.Dir(filepath.Dir(filepath.Dir(d)))
	default:
		return "", "", false
	}
	name := filepath.Base(d)
	v, found := strings.CutPrefix(name, "chromium-")
	if !found {
		return "", "", false
	}
	v = strings.TrimSuffix(v, "-pro")
	if !ValidVersion(v) {
		return "", "", false
	}
	return d, v, true
}

func isTampering(err error) bool {
	return errors.Is(err, ErrBadSignature) || errors.Is(err, ErrChecksumMismatch) ||
		errors.Is(err, ErrVersionMismatch) || errors.Is(err, ErrUnsafeArchive)
}
