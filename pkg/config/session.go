package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Session holds the settings one HTTP session may choose for itself (the
// TypeScript bridge's initialize _meta keys that have a flag here). A nil
// field keeps the server's setting.
type Session struct {
	// ProxyServer replaces the server's proxy (--proxy-server) for this
	// session, credentials included: the server's proxy credentials never
	// go to a proxy the client named.
	ProxyServer *string
	// ProxyBypass is the bypass list of ProxyServer (--proxy-bypass); it
	// needs ProxyServer.
	ProxyBypass *string
	// Headless replaces --headless.
	Headless *bool
	// ContextOptions is a JSON object of context options (the bridge's
	// subset, SessionContextKeys), merged key by key over the server's as
	// CLOAK_PLAYWRIGHT_MCP_CONTEXT_OPTIONS is.
	ContextOptions json.RawMessage
}

// SessionContextKeys are the context options a session may set: the
// bridge's list. Options that name files (storageState) or change the
// network path (proxy) are the server's alone.
var SessionContextKeys = []string{"userAgent", "viewport", "locale", "timezoneId", "colorScheme", "permissions",
	"geolocation", "extraHTTPHeaders", "httpCredentials", "ignoreHTTPSErrors", "offline", "deviceScaleFactor",
	"isMobile", "hasTouch"}

// KeyError is a per-session setting that was refused; Key names it as the
// client sent it (proxyServer, contextOptions, …).
type KeyError struct {
	Key string
	Err error
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Err.Error() }

func (e *KeyError) Unwrap() error { return e.Err }

// WithSession returns c with s applied, each setting checked as its flag
// is. It fails with a *KeyError naming the first setting refused.
func (c Config) WithSession(s Session) (Config, error) {
	if s.ProxyBypass != nil && s.ProxyServer == nil {
		return c, &KeyError{Key: "proxyBypass", Err: fmt.Errorf("needs proxyServer in the same _meta (the bypass list belongs to the session's proxy)")}
	}
	if s.ProxyServer != nil {
		p := strings.TrimSpace(*s.ProxyServer)
		if err := checkProxyServer(p); err != nil {
			return c, &KeyError{Key: "proxyServer", Err: err}
		}
		c.ProxyServer, c.ProxyBypass = p, ""
		c.Launch.ProxyUsername, c.Launch.ProxyPassword = "", ""
		if s.ProxyBypass != nil {
			c.ProxyBypass = strings.TrimSpace(*s.ProxyBypass)
		}
	}
	if s.Headless != nil {
		c.Headless = *s.Headless
	}
	if len(s.ContextOptions) > 0 {
		if err := c.applySessionContext(s.ContextOptions); err != nil {
			return c, &KeyError{Key: "contextOptions", Err: err}
		}
	}
	return c, nil
}

// applySessionContext applies a session's contextOptions object.
func (c *Config) applySessionContext(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return fmt.Errorf("must be a JSON object of context options (%s)", strings.Join(SessionContextKeys, ", "))
	}
	for k := range raw {
		if !oneOf(k, SessionContextKeys...) {
			return fmt.Errorf("key %q is not accepted per session; accepted: %s", k, strings.Join(SessionContextKeys, ", "))
		}
	}
	if err := applyContextJSON(c, b); err != nil {
		return err
	}
	if c.ViewportSize != "" {
		if w, h, ok := c.Viewport(); !ok || w <= 0 || h <= 0 {
			return fmt.Errorf("viewport must have a positive width and height, e.g. {\"width\":1280,\"height\":720}")
		}
	}
	return nil
}

// checkProxyServer is the rule of --proxy-server.
func checkProxyServer(p string) error {
	u, err := url.Parse(p)
	if !strings.Contains(p, "://") {
		u, err = url.Parse("http://" + p)
	}
	if p == "" || err != nil || u.Host == "" || !oneOf(u.Scheme, "http", "https", "socks4", "socks5", "socks5h") {
		return fmt.Errorf("%s must be http://, https://, socks4:// or socks5:// host:port", quote(redactURL(p)))
	}
	return nil
}
