package cdpproxy

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// Config configures a [Proxy]. The zero value, with BindHost filled from the
// lease, is a loopback-only proxy advertising http://127.0.0.1:<port>.
type Config struct {
	// BindHost is the address the lease's listener is bound to (--cdp-host).
	// If empty, the lease's host. A non-loopback host requires AllowRemote;
	// a wildcard (0.0.0.0, ::) also requires AdvertisedHost.
	BindHost string

	// AdvertisedHost is the host put in published URLs and required in the
	// Host header (--cdp-advertised-host). If empty, BindHost.
	AdvertisedHost string

	// AdvertisedScheme is "http" or "https" (--cdp-advertised-scheme). It only
	// changes the published URLs (https → wss); the proxy itself speaks plain
	// HTTP, for a TLS terminator in front of it. If empty, "http".
	AdvertisedScheme string

	// AllowRemote permits a non-loopback BindHost (--cdp-allow-remote).
	AllowRemote bool

	// AllowedOrigins lists extra origins ("https://example.com:8443") whose
	// pages may call the proxy. If empty, only requests without an Origin and
	// pages of the proxy's own origin are served. "*" is refused.
	AllowedOrigins []string

	// Limits bounds connections, sizes and timeouts. Zero fields take defaults.
	Limits Limits

	// Files is the file policy applied to what clients send: file: URLs,
	// files given to pages and download directories. The zero value refuses
	// them all; Files.Unrestricted lifts it. The method allowlist and the
	// DevTools and WebUI target rules hold either way.
	Files FilePolicy

	// Logf receives operational log lines. Lines never contain a capability
	// or a URL holding one (paths read /cdp/<redacted>). If nil, nothing is logged.
	Logf func(format string, args ...any)
}

// Validate checks the configuration as [New] will, so a caller can reject
// bad flags before leasing a port. BindHost must be set.
func (c Config) Validate() error {
	if strings.TrimSpace(c.BindHost) == "" {
		return errors.New("cdpproxy: BindHost (--cdp-host) is empty; want an address such as 127.0.0.1")
	}
	if !validHost(c.BindHost) {
		return fmt.Errorf("cdpproxy: BindHost (--cdp-host) %q is not an IP address or host name", c.BindHost)
	}
	if !isLoopbackHost(c.BindHost) && !c.AllowRemote {
		return fmt.Errorf("cdpproxy: BindHost (--cdp-host) %q is not a loopback address; "+
			"set AllowRemote (--cdp-allow-remote) to expose CDP beyond this machine", c.BindHost)
	}
	if isWildcardHost(c.BindHost) && c.AdvertisedHost == "" {
		return fmt.Errorf("cdpproxy: BindHost (--cdp-host) %q binds every interface; "+
			"set AdvertisedHost (--cdp-advertised-host) to the name clients dial", c.BindHost)
	}
	if c.AdvertisedHost != "" {
		if !validHost(c.AdvertisedHost) {
			return fmt.Errorf("cdpproxy: AdvertisedHost (--cdp-advertised-host) %q is not an IP address or host name", c.AdvertisedHost)
		}
		if isWildcardHost(c.AdvertisedHost) {
			return fmt.Errorf("cdpproxy: AdvertisedHost (--cdp-advertised-host) %q is a wildcard address no client can dial", c.AdvertisedHost)
		}
	}
	switch c.AdvertisedScheme {
	case "", "http", "https":
	default:
		return fmt.Errorf("cdpproxy: AdvertisedScheme (--cdp-advertised-scheme) %q: want http or https", c.AdvertisedScheme)
	}
	for _, o := range c.AllowedOrigins {
		if strings.TrimSpace(o) == "*" {
			return errors.New("cdpproxy: AllowedOrigins contains \"*\": list the origins allowed to drive the browser")
		}
		if _, ok := normalizeOrigin(o); !ok {
			return fmt.Errorf("cdpproxy: AllowedOrigins entry %q is not an origin such as https://example.com", o)
		}
	}
	if err := c.Files.validate(); err != nil {
		return err
	}
	return c.Limits.validate()
}

// validHost accepts an IP literal (IPv6 optionally bracketed) or a DNS name.
func validHost(h string) bool {
	bare := strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if net.ParseIP(bare) != nil {
		return true
	}
	if len(h) > 253 || strings.ContainsAny(h, ":[]") {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
