package cloakbrowser

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
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
	if !slices.Equal(got, []string{"--enable-automation", "--enable-unsafe-swiftshader", "--hide-scrollbars"}) {
		t.Errorf("got %q", got)
	}
	got[0] = "changed"
	if IgnoredDefaultArgs()[0] != "--enable-automation" {
		t.Error("IgnoredDefaultArgs shares its slice")
	}
}

func TestDedupeArgsMergesFeatureLists(t *testing.T) {
	cases := []struct {
		name string
		in   []string
		want []string
	}{
		{"last plain flag wins", []string{"--lang=en", "--x", "--lang=de"}, []string{"--x", "--lang=de"}},
		{"blink features merged", []string{"--disable-blink-features=AutomationControlled", "--a", "--disable-blink-features=Foo,AutomationControlled"},
			[]string{"--a", "--disable-blink-features=AutomationControlled,Foo"}},
		{"feature lists merged apart", []string{"--enable-features=A", "--disable-features=B", "--enable-features=C, A"},
			[]string{"--disable-features=B", "--enable-features=A,C"}},
		{"empty value dropped", []string{"--disable-features="}, []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := DedupeArgs(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLaunchArgsAutomationControlled(t *testing.T) {
	for _, bin := range []BinaryInfo{{Engine: EngineChromium}, {Engine: EngineCloak, Platform: PlatformLinuxX64}} {
		t.Run(bin.Engine, func(t *testing.T) {
			got := LaunchArgs(bin, LaunchOptions{})
			if !slices.Contains(got, "--disable-blink-features=AutomationControlled") {
				t.Errorf("LaunchArgs = %q: no AutomationControlled", got)
			}
			got = LaunchArgs(bin, LaunchOptions{ExtraArgs: []string{"--disable-blink-features=Notifications"}})
			var flags []string
			for _, a := range got {
				if strings.HasPrefix(a, "--disable-blink-features") {
					flags = append(flags, a)
				}
			}
			if !slices.Equal(flags, []string{"--disable-blink-features=AutomationControlled,Notifications"}) {
				t.Errorf("with the user's list: %q", flags)
			}
		})
	}
}

func TestWindowArgs(t *testing.T) {
	w := Window{ScreenWidth: 1536, ScreenHeight: 864, Taskbar: 40}
	chromium := BinaryInfo{Engine: EngineChromium}
	if got, want := WindowArgs(chromium, w, true), []string{"--window-size=1536,824", "--window-position=0,0", "--screen-info={0,0 1536x864 workAreaBottom=40}"}; !slices.Equal(got, want) {
		t.Errorf("headless chromium: %q, want %q", got, want)
	}
	if got, want := WindowArgs(chromium, w, false), []string{"--start-maximized"}; !slices.Equal(got, want) {
		t.Errorf("headed chromium: %q, want %q", got, want)
	}
	got := WindowArgs(BinaryInfo{Engine: EngineCloak}, w, true)
	if !slices.Contains(got, "--fingerprint-screen-width=1536") || !slices.Contains(got, "--fingerprint-screen-height=864") || !slices.Contains(got, "--screen-info={0,0 1536x864 workAreaBottom=40}") {
		t.Errorf("headless cloak: %q, want the fingerprint's screen and the headless screen of that size", got)
	}
	if headed := WindowArgs(BinaryInfo{Engine: EngineCloak}, w, false); !slices.Contains(headed, "--fingerprint-screen-width=1536") || slices.ContainsFunc(headed, func(a string) bool { return strings.HasPrefix(a, "--screen-info") }) {
		t.Errorf("headed cloak: %q, want the fingerprint's screen and no headless screen", headed)
	}
	for _, a := range got {
		if !IsWindowArg(a) {
			t.Errorf("IsWindowArg(%q) = false", a)
		}
	}
	if IsWindowArg("--lang=en") {
		t.Error("IsWindowArg(--lang) = true")
	}
	for range 50 {
		p := PickWindow()
		if p.Width() < 1280 || p.Height() <= 720 || p.Height() >= p.ScreenHeight {
			t.Fatalf("PickWindow = %+v", p)
		}
	}
	args := LaunchArgs(chromium, LaunchOptions{Window: &w, Headless: true, ExtraArgs: []string{"--window-size=800,600"}})
	if !slices.Contains(args, "--window-size=800,600") || slices.Contains(args, "--window-size=1536,824") {
		t.Errorf("the user's --window-size does not win: %q", args)
	}
}

func TestHeadfulUserAgent(t *testing.T) {
	ua := "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36"
	got, changed := HeadfulUserAgent(ua)
	if !changed || got != "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36" {
		t.Errorf("got %q, %v", got, changed)
	}
	if got, changed := HeadfulUserAgent(got); changed || strings.Contains(got, "Headless") {
		t.Errorf("a headed UA changed: %q", got)
	}
}

func TestLaunchArgsKeepPlaywrightsFeatureLists(t *testing.T) {
	lists := func(args []string) (enable, disable []string) {
		for _, a := range args {
			name, v, _ := strings.Cut(a, "=")
			switch name {
			case "--enable-features":
				enable = append(enable, v)
			case "--disable-features":
				disable = append(disable, v)
			}
		}
		return enable, disable
	}
	bin := BinaryInfo{Engine: EngineChromium}
	// Without lists of the user's: Playwright's enabled list stands (none
	// is passed); its disabled list is passed with RenderDocument and
	// SpareRendererForSitePerProcess.
	en, dis := lists(LaunchArgs(bin, LaunchOptions{}))
	if wantDis := strings.Join(append(slices.Clone(playwrightDisabledFeatures), "RenderDocument", "SpareRendererForSitePerProcess"), ","); en != nil || len(dis) != 1 || dis[0] != wantDis {
		t.Errorf("no user lists: got --enable-features %q, --disable-features %q, want none and %q", en, dis, wantDis)
	}
	en, dis = lists(LaunchArgs(bin, LaunchOptions{ExtraArgs: []string{"--disable-features=IsolateOrigins,site-per-process", "--enable-features=Mine"}}))
	wantDis := strings.Join(append(slices.Clone(playwrightDisabledFeatures), "RenderDocument", "SpareRendererForSitePerProcess", "IsolateOrigins", "site-per-process"), ",")
	if len(dis) != 1 || dis[0] != wantDis {
		t.Errorf("--disable-features = %q, want one list %q", dis, wantDis)
	}
	if !slices.Equal(en, []string{playwrightEnabledFeatures + ",Mine"}) {
		t.Errorf("--enable-features = %q, want one list with Playwright's first", en)
	}
}

// TestPlaywrightFeatureLists: the feature lists LaunchArgs merges a user's
// into are the installed driver's own (its chromiumSwitches).
func TestPlaywrightFeatureLists(t *testing.T) {
	testtier.BrowserTier(t)
	o := driver.Options{}.Resolved()
	src, err := os.ReadFile(filepath.Join(o.Dir, "package", "lib", "coreBundle.js"))
	if err != nil {
		t.Fatalf("the installed driver's bundle: %v (install it: go run ./cmd/cloakbrowser-mcp install --driver-only)", err)
	}
	m := regexp.MustCompile(`(?s)disabledFeatures = \[(.*?)\]\.filter\(Boolean\)`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no disabledFeatures list in coreBundle.js: Playwright's chromiumSwitches changed; read it and update playwrightDisabledFeatures")
	}
	var got []string
	for _, q := range regexp.MustCompile(`(?m)^\s*"([^"]+)",?\s*$`).FindAllSubmatch(m[1], -1) {
		got = append(got, string(q[1]))
	}
	if !slices.Equal(got, playwrightDisabledFeatures) {
		t.Errorf("Playwright %s disables %q; playwrightDisabledFeatures is %q", driver.PlaywrightVersion, got, playwrightDisabledFeatures)
	}
	if !strings.Contains(string(src), `"--enable-features=`+playwrightEnabledFeatures+`"`) {
		t.Errorf("Playwright %s does not pass --enable-features=%s: update playwrightEnabledFeatures", driver.PlaywrightVersion, playwrightEnabledFeatures)
	}
}
