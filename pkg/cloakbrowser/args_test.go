package cloakbrowser

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestStealthArgs(t *testing.T) {
	cloak := BinaryInfo{Engine: EngineCloak, Platform: PlatformLinuxX64}
	mac := BinaryInfo{Engine: EngineCloak, Platform: PlatformDarwinArm64}
	cases := []struct {
		name    string
		info    BinaryInfo
		seed    int
		persona string
		want    []string
	}{
		{name: "linux poses as windows", info: cloak, seed: 12345, want: []string{"--fingerprint=12345", "--fingerprint-platform=windows"}},
		{name: "mac stays mac", info: mac, seed: 54321, want: []string{"--fingerprint=54321", "--fingerprint-platform=macos"}},
		{name: "explicit persona", info: cloak, seed: 11111, persona: "macos", want: []string{"--fingerprint=11111", "--fingerprint-platform=macos"}},
		{name: "plain chromium gets none", info: BinaryInfo{Engine: EngineChromium, Platform: PlatformLinuxX64}, seed: 1},
		{name: "zero value gets none", info: BinaryInfo{}, seed: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := StealthArgs(tc.info, tc.seed, tc.persona); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("random seed in range", func(t *testing.T) {
		for range 200 {
			args := StealthArgs(cloak, 0, "")
			n, err := strconv.Atoi(strings.TrimPrefix(args[0], "--fingerprint="))
			if err != nil || n < 10000 || n > 99999 {
				t.Fatalf("seed arg %q", args[0])
			}
		}
	})
}

func TestIgnoredDefaultArgs(t *testing.T) {
	got := IgnoredDefaultArgs()
	if !slices.Equal(got, []string{"--enable-automation", "--enable-unsafe-swiftshader"}) {
		t.Errorf("got %q", got)
	}
	got[0] = "changed"
	if IgnoredDefaultArgs()[0] != "--enable-automation" {
		t.Error("IgnoredDefaultArgs shares its slice")
	}
}
