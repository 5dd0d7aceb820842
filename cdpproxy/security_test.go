package cdpproxy

import (
	"net/http/httptest"
	"testing"
)

func TestPolicy(t *testing.T) {
	loop := policy{scheme: "http", advertised: hostPort{"127.0.0.1", 9300}, loopbackBind: true, port: 9300,
		allowedOrigins: map[string]bool{"https://app.example.test:8443": true}}
	remote := policy{scheme: "https", advertised: hostPort{"cdp.example.test", 9300}, port: 9300,
		allowedOrigins: map[string]bool{}}
	tests := []struct {
		name       string
		p          *policy
		host       string
		origins    []string
		wantHost   bool
		wantOrigin bool
	}{
		{"advertised", &loop, "127.0.0.1:9300", nil, true, true},
		{"localhost alias", &loop, "localhost:9300", nil, true, true},
		{"LOCALHOST alias", &loop, "LOCALHOST:9300", nil, true, true},
		{"ipv6 loopback alias", &loop, "[::1]:9300", nil, true, true},
		{"other loopback ip", &loop, "127.0.0.2:9300", nil, true, true},
		{"wrong port", &loop, "127.0.0.1:9301", nil, false, true},
		{"no port means 80", &loop, "127.0.0.1", nil, false, true},
		{"rebinding name", &loop, "evil.example:9300", nil, false, true},
		{"empty host", &loop, "", nil, false, true},
		{"userinfo", &loop, "a@127.0.0.1:9300", nil, false, true},
		{"same origin", &loop, "127.0.0.1:9300", []string{"http://127.0.0.1:9300"}, true, true},
		{"same origin via alias", &loop, "127.0.0.1:9300", []string{"http://localhost:9300"}, true, true},
		{"listed origin", &loop, "127.0.0.1:9300", []string{"https://APP.example.test:8443"}, true, true},
		{"listed origin other port", &loop, "127.0.0.1:9300", []string{"https://app.example.test"}, true, false},
		{"foreign origin", &loop, "127.0.0.1:9300", []string{"https://evil.example"}, true, false},
		{"null origin", &loop, "127.0.0.1:9300", []string{"null"}, true, false},
		{"loopback other port origin", &loop, "127.0.0.1:9300", []string{"http://127.0.0.1:8080"}, true, false},
		{"two origins", &loop, "127.0.0.1:9300", []string{"http://127.0.0.1:9300", "http://127.0.0.1:9300"}, true, false},
		{"remote advertised", &remote, "cdp.example.test:9300", nil, true, true},
		{"remote refuses loopback", &remote, "127.0.0.1:9300", nil, false, true},
		{"remote same origin", &remote, "cdp.example.test:9300", []string{"https://cdp.example.test:9300"}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.hostAllowed(tt.host); got != tt.wantHost {
				t.Errorf("hostAllowed(%q) = %v; want %v", tt.host, got, tt.wantHost)
			}
			r := httptest.NewRequest("GET", "/", nil)
			for _, o := range tt.origins {
				r.Header.Add("Origin", o)
			}
			if got := tt.p.originAllowed(r); got != tt.wantOrigin {
				t.Errorf("originAllowed(%q) = %v; want %v", tt.origins, got, tt.wantOrigin)
			}
		})
	}
}

func TestNormalizeOrigin(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"https://Example.test", "https://example.test", true},
		{"https://example.test:443", "https://example.test", true},
		{"http://example.test:8080/", "http://example.test:8080", true},
		{"http://[::1]:9222", "http://[::1]:9222", true},
		{"devtools://devtools", "devtools://devtools", true},
		{"null", "", false},
		{"https://example.test/path", "", false},
		{"example.test", "", false},
		{"https://user@example.test", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := normalizeOrigin(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("normalizeOrigin(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}
