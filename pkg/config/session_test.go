package config

import (
	"errors"
	"strings"
	"testing"
)

func TestWithSession(t *testing.T) {
	str := func(s string) *string { return &s }
	no := false
	base := Default()
	base.ProxyServer, base.ProxyBypass = "http://server-proxy:1", ".corp"
	base.Launch.ProxyUsername, base.Launch.ProxyPassword = "srv", "secret"
	base.Context.Locale, base.Context.TimezoneID = "en-GB", "Europe/London"
	cases := []struct {
		name  string
		s     Session
		check func(t *testing.T, c Config)
		key   string // the KeyError's key; "" for success
		err   string
	}{
		{"nothing", Session{}, func(t *testing.T, c Config) {
			if c.ProxyServer != base.ProxyServer || c.Launch.ProxyPassword != "secret" || !c.Headless {
				t.Fatalf("changed: %+v", c)
			}
		}, "", ""},
		{"own proxy drops the server's bypass and credentials", Session{ProxyServer: str(" http://u:p@mine:3128 ")}, func(t *testing.T, c Config) {
			if c.ProxyServer != "http://u:p@mine:3128" || c.ProxyBypass != "" || c.Launch.ProxyUsername != "" || c.Launch.ProxyPassword != "" {
				t.Fatalf("proxy %q bypass %q creds %q/%q", c.ProxyServer, c.ProxyBypass, c.Launch.ProxyUsername, c.Launch.ProxyPassword)
			}
		}, "", ""},
		{"own proxy and bypass", Session{ProxyServer: str("socks5://mine:1080"), ProxyBypass: str("a.example,b.example")}, func(t *testing.T, c Config) {
			if c.ProxyServer != "socks5://mine:1080" || c.ProxyBypass != "a.example,b.example" {
				t.Fatalf("proxy %q bypass %q", c.ProxyServer, c.ProxyBypass)
			}
		}, "", ""},
		{"host:port alone is http", Session{ProxyServer: str("mine:3128")}, nil, "", ""},
		{"bad scheme", Session{ProxyServer: str("ftp://mine:21")}, nil, "proxyServer", "must be http://, https://, socks4:// or socks5://"},
		{"password redacted", Session{ProxyServer: str("ftp://u:hunter2@mine:21")}, func(t *testing.T, c Config) {}, "proxyServer", "xxxxx"},
		{"bypass alone", Session{ProxyBypass: str("a.example")}, nil, "proxyBypass", "needs proxyServer"},
		{"headless off", Session{Headless: &no}, func(t *testing.T, c Config) {
			if c.Headless {
				t.Fatal("still headless")
			}
		}, "", ""},
		{"context merged key by key", Session{ContextOptions: []byte(`{"locale":"de-DE","viewport":{"width":800,"height":600},"userAgent":"UA/1"}`)}, func(t *testing.T, c Config) {
			if c.Context.Locale != "de-DE" || c.Context.TimezoneID != "Europe/London" || c.ViewportSize != "800x600" || c.UserAgent != "UA/1" {
				t.Fatalf("context %+v viewport %q ua %q", c.Context, c.ViewportSize, c.UserAgent)
			}
		}, "", ""},
		{"storageState is the server's", Session{ContextOptions: []byte(`{"storageState":"/etc/passwd"}`)}, nil, "contextOptions", `key "storageState" is not accepted per session`},
		{"bad viewport", Session{ContextOptions: []byte(`{"viewport":{"width":-1,"height":5}}`)}, nil, "contextOptions", "viewport must have a positive width and height"},
		{"wrong type", Session{ContextOptions: []byte(`{"offline":"yes"}`)}, nil, "contextOptions", `key "offline" must be`},
		{"not an object", Session{ContextOptions: []byte(`[1]`)}, nil, "contextOptions", "must be a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := base.WithSession(tc.s)
			if tc.key != "" {
				var ke *KeyError
				if !errors.As(err, &ke) || ke.Key != tc.key || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %s: …%s", err, tc.key, tc.err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
	if base.Context.Locale != "en-GB" || base.ProxyServer != "http://server-proxy:1" {
		t.Fatal("WithSession changed the server's configuration")
	}
}
