package cdpproxy

import (
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // substring; empty means valid
	}{
		{name: "loopback", cfg: Config{BindHost: "127.0.0.1"}},
		{name: "localhost", cfg: Config{BindHost: "localhost"}},
		{name: "ipv6 loopback", cfg: Config{BindHost: "::1"}},
		{name: "https advertised", cfg: Config{BindHost: "127.0.0.1", AdvertisedHost: "cdp.example.test", AdvertisedScheme: "https"}},
		{name: "remote allowed", cfg: Config{BindHost: "192.0.2.10", AllowRemote: true}},
		{name: "wildcard with advertised", cfg: Config{BindHost: "0.0.0.0", AllowRemote: true, AdvertisedHost: "cdp.example.test"}},
		{name: "allowed origin", cfg: Config{BindHost: "127.0.0.1", AllowedOrigins: []string{"https://app.example.test:8443"}}},
		{name: "empty bind", cfg: Config{}, wantErr: "BindHost (--cdp-host) is empty"},
		{name: "remote without allow", cfg: Config{BindHost: "192.0.2.10"}, wantErr: "--cdp-allow-remote"},
		{name: "wildcard without allow", cfg: Config{BindHost: "0.0.0.0"}, wantErr: "--cdp-allow-remote"},
		{name: "wildcard without advertised", cfg: Config{BindHost: "0.0.0.0", AllowRemote: true}, wantErr: "--cdp-advertised-host"},
		{name: "ipv6 wildcard without advertised", cfg: Config{BindHost: "::", AllowRemote: true}, wantErr: "--cdp-advertised-host"},
		{name: "advertised wildcard", cfg: Config{BindHost: "127.0.0.1", AdvertisedHost: "0.0.0.0"}, wantErr: "wildcard"},
		{name: "advertised with port", cfg: Config{BindHost: "127.0.0.1", AdvertisedHost: "host:80"}, wantErr: "not an IP address or host name"},
		{name: "advertised url", cfg: Config{BindHost: "127.0.0.1", AdvertisedHost: "http://host"}, wantErr: "not an IP address or host name"},
		{name: "bad bind", cfg: Config{BindHost: "a b"}, wantErr: "not an IP address or host name"},
		{name: "bad scheme", cfg: Config{BindHost: "127.0.0.1", AdvertisedScheme: "ws"}, wantErr: "want http or https"},
		{name: "star origin", cfg: Config{BindHost: "127.0.0.1", AllowedOrigins: []string{"*"}}, wantErr: `"*"`},
		{name: "origin with path", cfg: Config{BindHost: "127.0.0.1", AllowedOrigins: []string{"https://a.test/x"}}, wantErr: "not an origin"},
		{name: "negative limit", cfg: Config{BindHost: "127.0.0.1", Limits: Limits{MaxWebSockets: -1}}, wantErr: "Limits.MaxWebSockets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v; want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v; want error containing %q", err, tt.wantErr)
			}
		})
	}
}
