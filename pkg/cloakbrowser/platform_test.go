package cloakbrowser

import (
	"path/filepath"
	"testing"
)

func TestPlatformFor(t *testing.T) {
	cases := []struct {
		goos, goarch, want string
		wantErr            bool
	}{
		{"linux", "amd64", PlatformLinuxX64, false},
		{"linux", "arm64", PlatformLinuxArm64, false},
		{"darwin", "arm64", PlatformDarwinArm64, false},
		{"darwin", "amd64", PlatformDarwinX64, false},
		{"windows", "amd64", PlatformWindowsX64, false},
		{"windows", "arm64", "", true},
		{"freebsd", "amd64", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.goos+"/"+tc.goarch, func(t *testing.T) {
			got, err := platformFor(tc.goos, tc.goarch)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("got %q, %v", got, err)
			}
		})
	}
}

func TestPlatformTables(t *testing.T) {
	cases := []struct{ platform, pin, archive, bin string }{
		{PlatformLinuxX64, "146.0.7680.177.5", "cloakbrowser-linux-x64.tar.gz", "chrome"},
		{PlatformWindowsX64, "146.0.7680.177.5", "cloakbrowser-windows-x64.zip", "chrome.exe"},
		{PlatformLinuxArm64, "146.0.7680.177.3", "cloakbrowser-linux-arm64.tar.gz", "chrome"},
		{PlatformDarwinArm64, "145.0.7632.109.2", "cloakbrowser-darwin-arm64.tar.gz", filepath.Join("Chromium.app", "Contents", "MacOS", "Chromium")},
		{PlatformDarwinX64, "145.0.7632.109.2", "cloakbrowser-darwin-x64.tar.gz", filepath.Join("Chromium.app", "Contents", "MacOS", "Chromium")},
	}
	for _, tc := range cases {
		t.Run(tc.platform, func(t *testing.T) {
			if got := PinnedVersionFor(tc.platform); got != tc.pin || !ValidVersion(got) {
				t.Errorf("pin %q", got)
			}
			if got := ArchiveName(tc.platform); got != tc.archive {
				t.Errorf("archive %q", got)
			}
			if got := binaryRelPath(tc.platform); got != tc.bin {
				t.Errorf("binary %q", got)
			}
		})
	}
	if PinnedVersionFor("plan9-x64") != "" {
		t.Error("pin for an unsupported platform")
	}
}

func TestCompareVersions(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"146.0.7680.177.5", "146.0.7680.177.5", 0},
		{"146.0.7680.177.5", "146.0.7680.177.3", 1},
		{"145.0.7632.109.2", "146.0.7680.177.5", -1},
		{"146.0.7680.177", "146.0.7680.177.0", -1},
		{"99999999999999999999999.0.0.1", "1.0.0.1", 1},
		{"010.0.0.1", "9.0.0.1", 1},
		{"1.0.0.10", "1.0.0.9", 1},
	}
	for _, tc := range cases {
		t.Run(tc.a+"_vs_"+tc.b, func(t *testing.T) {
			if got := compareVersions(tc.a, tc.b); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
			if got := compareVersions(tc.b, tc.a); got != -tc.want {
				t.Errorf("reverse got %d", got)
			}
		})
	}
}
