package cloakbrowser

import (
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// PinnedVersion is the built-in free CloakBrowser build for linux-x64 and
// windows-x64 (cloakbrowser npm 0.5.10). Other platforms have their own pin:
// see PinnedVersionFor.
const PinnedVersion = "146.0.7680.177.5"

// Supported platform tags, as used in archive names and marker files.
const (
	PlatformLinuxX64    = "linux-x64"
	PlatformLinuxArm64  = "linux-arm64"
	PlatformDarwinArm64 = "darwin-arm64"
	PlatformDarwinX64   = "darwin-x64"
	PlatformWindowsX64  = "windows-x64"
)

// Platforms lists the supported platform tags.
func Platforms() []string {
	return []string{PlatformLinuxX64, PlatformLinuxArm64, PlatformDarwinArm64, PlatformDarwinX64, PlatformWindowsX64}
}

// PinnedVersionFor returns the built-in free build for a platform tag, or ""
// for an unsupported one. The pins follow cloakbrowser npm 0.5.10.
func PinnedVersionFor(platform string) string {
	switch platform {
	case PlatformLinuxX64, PlatformWindowsX64:
		return PinnedVersion
	case PlatformLinuxArm64:
		return "146.0.7680.177.3"
	case PlatformDarwinArm64, PlatformDarwinX64:
		return "145.0.7632.109.2"
	}
	return ""
}

// DetectPlatform returns the platform tag of the running process, or an
// error naming GOOS/GOARCH when CloakBrowser publishes no build for it.
func DetectPlatform() (string, error) {
	return platformFor(runtime.GOOS, runtime.GOARCH)
}

func platformFor(goos, goarch string) (string, error) {
	switch goos + "/" + goarch {
	case "linux/amd64":
		return PlatformLinuxX64, nil
	case "linux/arm64":
		return PlatformLinuxArm64, nil
	case "darwin/arm64":
		return PlatformDarwinArm64, nil
	case "darwin/amd64":
		return PlatformDarwinX64, nil
	case "windows/amd64":
		return PlatformWindowsX64, nil
	}
	return "", fmt.Errorf("unsupported platform %s/%s: CloakBrowser builds exist for %s", goos, goarch, strings.Join(Platforms(), ", "))
}

func validPlatform(p string) bool { return PinnedVersionFor(p) != "" }

// archiveExt is the archive suffix published for a platform: Windows builds
// are zip files, all others tar.gz.
func archiveExt(platform string) string {
	if platform == PlatformWindowsX64 {
		return ".zip"
	}
	return ".tar.gz"
}

// ArchiveName is the release asset name for a platform, e.g.
// "cloakbrowser-linux-x64.tar.gz".
func ArchiveName(platform string) string {
	return "cloakbrowser-" + platform + archiveExt(platform)
}

// binaryRelPath is where the executable sits inside chromium-<ver>/.
func binaryRelPath(platform string) string {
	switch {
	case strings.HasPrefix(platform, "darwin-"):
		return filepath.Join("Chromium.app", "Contents", "MacOS", "Chromium")
	case strings.HasPrefix(platform, "windows-"):
		return "chrome.exe"
	}
	return "chrome"
}

// versionDirName is the per-version cache directory name.
func versionDirName(version string) string { return "chromium-" + version }

// markerName is the update-check marker the wrappers write for a platform.
func markerName(platform string) string { return "latest_version_" + platform }

var versionRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+){3,4}$`)

// ValidVersion reports whether v is an exact CloakBrowser version pin, such
// as "146.0.7680.177.5" (four or five dot-separated numbers).
func ValidVersion(v string) bool { return versionRE.MatchString(v) }

// compareVersions compares two valid versions numerically, component by
// component; a version that is a prefix of the other is the older one (as
// the wrappers' tuple comparison does). Numbers of any length compare
// correctly because they are compared as digit strings.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := compareDigits(as[i], bs[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(as) < len(bs):
		return -1
	case len(as) > len(bs):
		return 1
	}
	return 0
}

func compareDigits(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}
