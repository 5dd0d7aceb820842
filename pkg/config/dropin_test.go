package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDropinLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	secrets := write("s.env", "# comment\nexport PASSWORD=\"hunter 2\"\nTOKEN='abc'\nPLAIN=x # trailing\n")
	file := write("c.json", `{
	  "browser": {"browserName": "chromium", "initScript": ["init.js"], "cdpHeaders": {"A": "b"},
	    "launchOptions": {"args": ["--x"], "channel": "chrome", "proxy": {"server": "http://p:1", "username": "u", "password": "pw"}},
	    "contextOptions": {"userAgent": "UA", "locale": "de-DE", "viewport": {"width": 800, "height": 600}, "serviceWorkers": "block", "geolocation": {"latitude": 1, "longitude": 2}},
	    "remoteEndpoint": {"endpoint": "ws://h:1/", "headers": {"H": "v"}}},
	  "network": {"allowedOrigins": ["https://a"], "blockedOrigins": ["https://b"]},
	  "timeouts": {"settle": 100, "idle": 0, "expect": 700},
	  "console": {"level": "error"}, "codegen": "python", "imageResponses": "omit",
	  "snapshot": {"boxes": true}, "webmcp": false, "secrets": {"K": "V"}, "testIdAttribute": "data-qa"
	}`)
	cases := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(t *testing.T, c Config)
	}{
		{"defaults", nil, nil, func(t *testing.T, c Config) {
			if c.Codegen != "typescript" || c.ImageResponses != "allow" || c.ConsoleLevel != "info" || c.TestIDAttribute != "data-testid" || c.CDPTimeout != 30*time.Second || c.IdleAfter() != time.Hour {
				t.Fatalf("%+v", c)
			}
		}},
		{"upstream file keys", []string{"--config", file}, nil, func(t *testing.T, c Config) {
			if c.InitScripts[0] != filepath.Join(dir, "init.js") || c.CDPHeaders["A"] != "b" || c.Browser != "chrome" || c.ProxyServer != "http://p:1" ||
				c.Launch.ProxyUsername != "u" || c.UserAgent != "UA" || c.Context.Locale != "de-DE" || c.ViewportSize != "800x600" ||
				!c.BlockServiceWorkers || c.Context.Geolocation.Longitude != 2 || c.Endpoint != "ws://h:1/" || c.EndpointHeaders["H"] != "v" ||
				c.AllowedOrigins[0] != "https://a" || c.BlockedOrigins[0] != "https://b" || c.TimeoutSettle != 100*time.Millisecond ||
				c.IdleAfter() != 0 || c.TimeoutExpect != 700*time.Millisecond || c.ConsoleLevel != "error" || c.Codegen != "python" ||
				c.ImageResponses != "omit" || !c.SnapshotBoxes || !c.NoWebMCP || c.Secrets["K"] != "V" || c.TestIDAttribute != "data-qa" || c.ExtraArgs[0] != "--x" {
				t.Fatalf("%+v", c)
			}
		}},
		{"env exceptions", nil, map[string]string{"PLAYWRIGHT_MCP_SECRETS_FILE": secrets, "PLAYWRIGHT_MCP_CDP_HEADERS": "X-A: 1", "PLAYWRIGHT_MCP_WEBMCP": "false", "PLAYWRIGHT_MCP_BLOCKED_ORIGINS": "https://a; https://b"}, func(t *testing.T, c Config) {
			if c.Secrets["PASSWORD"] != "hunter 2" || c.Secrets["TOKEN"] != "abc" || c.Secrets["PLAIN"] != "x" || c.CDPHeaders["X-A"] != "1" || !c.NoWebMCP || len(c.BlockedOrigins) != 2 {
				t.Fatalf("%+v", c)
			}
		}},
		{"flags beat env beat file", []string{"--config", file, "--codegen", "java"}, map[string]string{"PLAYWRIGHT_MCP_CODEGEN": "csharp", "PLAYWRIGHT_MCP_USER_AGENT": "EnvUA"}, func(t *testing.T, c Config) {
			if c.Codegen != "java" || c.UserAgent != "EnvUA" {
				t.Fatalf("%s %s", c.Codegen, c.UserAgent)
			}
		}},
		{"variadic and repeated", []string{"--init-script", "a.js", "b.js", "--grant-permissions", "geolocation", "clipboard-read", "--cdp-header", "A: 1", "--cdp-header", "B: 2", "--init-script=c.js"}, map[string]string{"PLAYWRIGHT_MCP_INIT_SCRIPT": "env.js"}, func(t *testing.T, c Config) {
			if !reflect.DeepEqual(c.InitScripts, []string{"a.js", "b.js", "c.js"}) || !reflect.DeepEqual(c.GrantPermissions, []string{"geolocation", "clipboard-read"}) || len(c.CDPHeaders) != 2 {
				t.Fatalf("%q %q %v", c.InitScripts, c.GrantPermissions, c.CDPHeaders)
			}
		}},
		{"mobile", []string{"--mobile"}, nil, func(t *testing.T, c Config) {
			if c.DeviceName() != MobileDevice {
				t.Fatal(c.DeviceName())
			}
		}},
		{"idle default", nil, nil, func(t *testing.T, c Config) {
			if c.IdleAfter() != time.Hour && c.Headless || c.IdleAfter() != 0 && !c.Headless {
				t.Fatal(c.Headless, c.IdleAfter())
			}
		}},
		{"idle timeout", []string{"--idle-timeout", "1500", "--file-paths", "absolute", "--output-max-size", "1000", "--save-session"}, nil, func(t *testing.T, c Config) {
			if c.IdleAfter() != 1500*time.Millisecond || c.FilePaths != "absolute" || c.OutputMaxSize != 1000 || !c.SaveSession || c.Validate() != nil {
				t.Fatal(c.IdleAfter(), c.FilePaths, c.OutputMaxSize, c.SaveSession, c.Validate())
			}
		}},
		{"idle zero disables", []string{"--idle-timeout", "0"}, nil, func(t *testing.T, c Config) {
			if c.IdleAfter() != 0 {
				t.Fatal(c.IdleAfter())
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := Load(tc.args, env(tc.env), nil)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestDropinRefusals(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string // at Load or Validate
	}{
		{"unknown flag", []string{"--proxy-servr", "x"}, "unknown flag --proxy-servr; did you mean --proxy-server?"},
		{"unknown flag far from all", []string{"--zzzzzzzzzz"}, "unknown flag --zzzzzzzzzz; run --help"},
		{"codegen", []string{"--codegen", "cobol"}, `--codegen="cobol": must be one of typescript, python, java, csharp, none`},
		{"image responses", []string{"--image-responses", "some"}, "--image-responses"},
		{"console level", []string{"--console-level", "loud"}, "--console-level"},
		{"firefox", []string{"--browser", "firefox"}, "drives Chromium only"},
		{"unknown browser", []string{"--browser", "opera"}, `--browser="opera"`},
		{"mobile and device", []string{"--mobile", "--device", "iPhone 15"}, "cannot be combined with --device"},
		{"device with cdp", []string{"--device", "iPhone 15", "--cdp-endpoint", "http://127.0.0.1:9222"}, "not supported with --cdp-endpoint"},
		{"cdp endpoint shape", []string{"--cdp-endpoint", "localhost"}, "--cdp-endpoint"},
		{"proxy scheme", []string{"--proxy-server", "ftp://u:secret@x:1"}, "--proxy-server"},
		{"extension", []string{"--extension"}, "needs @playwright/mcp's Node server"},
		{"init page", []string{"--init-page", "p.ts"}, "cannot run in this Go server"},
		{"geoip", []string{"--geoip-proxy-match"}, "GeoIP database"},
		{"pfx", []string{"--https-pfx", "a.pfx"}, "PKCS#12"},
		{"secrets file", []string{"--secrets", "/nonexistent"}, `--secrets="/nonexistent": cannot read the dotenv file`},
		{"storage state file", []string{"--storage-state", "/nonexistent"}, "--storage-state"},
		{"shared browser context", []string{"--shared-browser-context"}, "is not supported: every HTTP session has a browser context of its own"},
		{"viewport", []string{"--viewport-size", "12x"}, "--viewport-size=12x"},
		{"missing value", []string{"--device"}, "--device needs a value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := Load(tc.args, env(nil), nil)
			if err == nil {
				err = c.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error with %q, got %v", tc.want, err)
			}
			if strings.Contains(err.Error(), "secret@") {
				t.Fatalf("proxy password in the error: %v", err)
			}
		})
	}
	var uf *UnknownFlagError
	_, _, err := Load([]string{"--snapshot-mod", "full"}, env(nil), nil)
	if !errors.As(err, &uf) || uf.Suggest != "snapshot-mode" {
		t.Fatalf("%v", err)
	}
}

func TestRecordVideoOptions(t *testing.T) {
	for _, tc := range []struct {
		name, json, err string
	}{
		{name: "dir and size", json: `{"recordVideo": {"dir": "videos", "size": {"width": 640, "height": 360}}}`},
		{name: "absolute dir", json: `{"recordVideo": {"dir": "/srv/out/videos"}}`},
		{name: "escaping dir", json: `{"recordVideo": {"dir": "../videos"}}`, err: "inside the output directory"},
		{name: "zero size", json: `{"recordVideo": {"size": {"width": 0, "height": 360}}}`, err: "1 to 8192"},
		{name: "fps and showActions", json: `{"recordVideo": {"fps": 10, "showActions": {"duration": 800, "position": "bottom", "fontSize": 18, "cursor": "none", "style": {"title": "color: red"}}}}`},
		{name: "unknown key", json: `{"recordVideo": {"quality": 1}}`, err: "recordVideo.quality is not supported"},
		{name: "fps too high", json: `{"recordVideo": {"fps": 120}}`, err: "fps=120: must be 1 to 60"},
		{name: "unknown position", json: `{"recordVideo": {"showActions": {"position": "middle"}}}`, err: "showActions.position=\"middle\""},
		{name: "unknown cursor", json: `{"recordVideo": {"showActions": {"cursor": "hand"}}}`, err: "showActions.cursor=\"hand\""},
		{name: "markup in a style", json: `{"recordVideo": {"showActions": {"style": {"title": "</style>"}}}}`, err: "inline CSS declarations"},
		{name: "unknown style key", json: `{"recordVideo": {"showActions": {"style": {"cursor": "x"}}}}`, err: "showActions.style.cursor is not supported"},
		{name: "showActions not an object", json: `{"recordVideo": {"showActions": true}}`, err: "must be an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			err := applyContextJSON(&c, []byte(tc.json))
			if tc.err == "" {
				if err != nil || c.Context.RecordVideo == nil {
					t.Fatalf("applyContextJSON = %v, recordVideo %v", err, c.Context.RecordVideo)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("applyContextJSON = %v; want an error with %q", err, tc.err)
			}
		})
	}
}
