package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
)

func TestParseBridgeMeta(t *testing.T) {
	const b = `io.github.swimmwatch/cloakbrowser-mcp`
	meta := func(obj string) string { return `{"_meta":{"` + b + `":` + obj + `}}` }
	cases := []struct {
		name     string
		params   string
		def      bool
		wantCDP  bool
		settings string // meta.settings(), comma-joined
		err      string // part of the error; "" for none
	}{
		{"no params, default off", ``, false, false, "", ""},
		{"no params, default on", ``, true, true, "", ""},
		{"no _meta", `{"protocolVersion":"2025-11-25"}`, true, true, "", ""},
		{"bridge key on", meta(`{"cdpEnabled":true}`), false, true, "", ""},
		{"bridge key off beats --cdp-enabled", meta(`{"cdpEnabled":false}`), true, false, "", ""},
		{"own key", `{"_meta":{"io.github.cloakmcp/cloakbrowser-mcp":{"cdpEnabled":true}}}`, false, true, "", ""},
		{"both keys", `{"_meta":{"io.github.cloakmcp/cloakbrowser-mcp":{},"` + b + `":{}}}`, false, false, "", "send the session's settings under one of them"},
		{"unrelated key ignored", `{"_meta":{"com.example/x":{"cdpEnabled":true},"progressToken":1}}`, false, false, "", ""},
		{"cdpEnabled string", meta(`{"cdpEnabled":"true"}`), false, false, "", `.cdpEnabled: must be true or false, got "\"true\""`},
		{"null is unset", meta(`{"cdpEnabled":null,"proxyServer":null}`), true, true, "", ""},
		{"null object", meta(`null`), true, true, "", ""},
		{"not an object", meta(`[]`), false, false, "", "must be an object of settings"},
		{"malformed params left to mcp-go", `[1,2]`, true, true, "", ""},
		{"settings", meta(`{"proxyServer":" http://p:1 ","proxyBypass":"a,b","headless":true,"userDataDir":"p","contextOptions":{"locale":"de-DE"}}`), false, false,
			"proxyServer,proxyBypass,headless,userDataDir,contextOptions", ""},
		{"empty string", meta(`{"proxyServer":"  "}`), false, false, "", ".proxyServer: must be a non-empty string"},
		{"number for a string", meta(`{"userDataDir":5}`), false, false, "", ".userDataDir: must be a non-empty string, got \"5\""},
		{"headless string", meta(`{"headless":"no"}`), false, false, "", ".headless: must be true or false"},
		{"contextOptions not an object", meta(`{"contextOptions":"{}"}`), false, false, "", ".contextOptions: must be an object of context options"},
		{"geoipProxyMatch off", meta(`{"geoipProxyMatch":false}`), false, false, "", ""},
		{"geoipProxyMatch on", meta(`{"geoipProxyMatch":true}`), false, false, "", ".geoipProxyMatch: is not supported (as --geoip-proxy-match)"},
		{"humanize off", meta(`{"humanize":false}`), false, false, "", ""},
		{"humanize on", meta(`{"humanize":true}`), false, false, "", ".humanize: is not supported"},
		{"humanPreset", meta(`{"humanPreset":"careful"}`), false, false, "", ".humanPreset: is not supported: it applies only with humanize"},
		{"humanPreset bad", meta(`{"humanPreset":"fast"}`), false, false, "", `.humanPreset: must be "default" or "careful"`},
		{"extensionPaths", meta(`{"extensionPaths":["/x"]}`), false, false, "", ".extensionPaths: is not supported"},
		{"extensionMode", meta(`{"extensionMode":"x"}`), false, false, "", ".extensionMode: is not supported (as --extension)"},
		{"profileDirName", meta(`{"profileDirName":"Default"}`), false, false, "", ".profileDirName: is not supported (as --profile-dir-name)"},
		{"typo", meta(`{"proxyserver":"http://p:1"}`), false, false, "", `.proxyserver: is not a setting of this server; did you mean "proxyServer"?`},
		{"unknown", meta(`{"zzzzzzzzzz":1}`), false, false, "", `.zzzzzzzzzz: is not a setting of this server; the settings are proxyServer,`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := parseBridgeMeta(json.RawMessage(tc.params))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				if !strings.HasPrefix(err.Error(), "initialize _meta") {
					t.Fatalf("err %q does not say where", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.cdpRequested(tc.def); got != tc.wantCDP {
				t.Fatalf("cdp %v, want %v", got, tc.wantCDP)
			}
			if got := strings.Join(m.settings(), ","); got != tc.settings {
				t.Fatalf("settings %q, want %q", got, tc.settings)
			}
		})
	}
	m, _ := parseBridgeMeta(json.RawMessage(`{"_meta":{"progressToken":1,"com.example/x":{}}}`))
	if strings.Join(m.others, ",") != "com.example/x,progressToken" {
		t.Fatalf("others %v", m.others)
	}
}

func TestProfileDir(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tmp, filepath.Join(out, "link")); err != nil {
		t.Fatal(err)
	}
	const me, other = "t-aaaaaaaaaaaa", "t-bbbbbbbbbbbb"
	cases := []struct {
		name         string
		principal    string
		unrestricted bool
		maxSize      int64
		path         string
		want         string // the directory made; "" when refused
		err          string
	}{
		{"relative, anonymous", "anonymous", false, 0, "profiles/a", filepath.Join(out, "profiles", "a"), ""},
		{"relative, a token", me, false, 0, "p", filepath.Join(out, me, "p"), ""},
		{"absolute inside", me, false, 0, filepath.Join(out, me, "q"), filepath.Join(out, me, "q"), ""},
		{"absolute outside", me, false, 0, filepath.Join(tmp, "x"), "", "is outside the output directory"},
		{"dot-dot", me, false, 0, "../x", "", "is outside the output directory"},
		{"the area", me, false, 0, ".", "", "is the output directory itself"},
		{"another's, anonymous", "anonymous", false, 0, other + "/p", "", "in another principal's directory"},
		{"another's, unrestricted", me, true, 0, filepath.Join(out, other, "p"), "", "in another principal's directory"},
		{"outside, unrestricted", me, true, 0, filepath.Join(tmp, "free"), filepath.Join(tmp, "free"), ""},
		{"symlink", "anonymous", false, 0, "link/p", "", "a symlink leading out of it is refused"},
		{"eviction", me, false, 1 << 20, "p", "", "--output-max-size"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{cfg: config.Default()}
			s.cfg.OutputDir, s.cfg.AllowUnrestrictedFileAccess, s.cfg.OutputMaxSize = out, tc.unrestricted, tc.maxSize
			got, err := s.profileDir(tc.principal, tc.path)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			if st, err := os.Stat(got); err != nil || !st.IsDir() {
				t.Fatalf("not made: %v", err)
			}
		})
	}
	for _, p := range []string{filepath.Join(tmp, "p"), filepath.Join(out, other)} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("a refused profile made %s", p)
		}
	}
}

func TestProfileClaims(t *testing.T) {
	var c profileClaims
	release, ok := c.claim("/a")
	if !ok {
		t.Fatal("first claim refused")
	}
	if _, ok := c.claim("/a"); ok {
		t.Fatal("a profile in use was claimed twice")
	}
	if _, ok := c.claim("/b"); !ok {
		t.Fatal("another profile refused")
	}
	release()
	release() // a second release does nothing
	r2, ok := c.claim("/a")
	if !ok {
		t.Fatal("a released profile cannot be claimed")
	}
	release()
	if _, ok := c.claim("/a"); ok {
		t.Fatal("a stale release freed the new claim")
	}
	r2()
}
