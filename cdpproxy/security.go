package cdpproxy

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/portrange"
)

// isLoopbackHost reports "localhost" or a loopback IP literal (127/8, ::1).
func isLoopbackHost(h string) bool {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Unmap().IsLoopback()
}

// isWildcardHost reports the any-address binds, which no client can dial.
func isWildcardHost(h string) bool {
	ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
	return err == nil && ip.IsUnspecified()
}

// authority formats host:port, bracketing IPv6 literals.
func authority(host string, port int) string {
	return net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), strconv.Itoa(port))
}

// hostPort is a normalized (lowercase host, no brackets) authority.
type hostPort struct {
	host string
	port int
}

// parseAuthority parses a Host header value or URL host. A missing port means
// defaultPort. It rejects anything but host[:port].
func parseAuthority(s string, defaultPort int) (hostPort, bool) {
	if s == "" || strings.ContainsAny(s, " \t/\\@?#,") {
		return hostPort{}, false
	}
	host, portStr, err := net.SplitHostPort(s)
	port := defaultPort
	if err != nil {
		// No port: a bare name or a bracketed IPv6 literal.
		host = s
		if strings.HasPrefix(host, "[") {
			if !strings.HasSuffix(host, "]") {
				return hostPort{}, false
			}
			host = host[1 : len(host)-1]
		}
		if strings.Contains(host, ":") && !strings.HasPrefix(s, "[") {
			return hostPort{}, false
		}
	} else {
		n, perr := portrange.ParsePort(portStr)
		if perr != nil {
			return hostPort{}, false
		}
		port = n
	}
	if host == "" || port == 0 {
		return hostPort{}, false
	}
	if strings.Contains(host, ":") {
		ip, perr := netip.ParseAddr(host)
		if perr != nil {
			return hostPort{}, false
		}
		host = ip.String()
	}
	return hostPort{host: strings.ToLower(host), port: port}, true
}

func defaultPortFor(scheme string) int {
	switch strings.ToLower(scheme) {
	case "https", "wss":
		return 443
	case "http", "ws":
		return 80
	}
	return 0
}

// policy is a proxy's Host and Origin rules, fixed at New.
type policy struct {
	scheme         string   // advertised scheme
	advertised     hostPort // the advertised authority
	loopbackBind   bool     // loopback names are accepted too
	port           int      // the listening port
	allowedOrigins map[string]bool
}

// hostAllowed reports whether a Host header names this proxy: the advertised
// authority or, when bound to loopback, a loopback name with the proxy's
// port. Anything else (DNS rebinding) is refused.
func (p *policy) hostAllowed(hostHeader string) bool {
	hp, ok := parseAuthority(hostHeader, defaultPortFor(p.scheme))
	if !ok {
		return false
	}
	if hp == p.advertised {
		return true
	}
	return p.loopbackBind && hp.port == p.port && isLoopbackHost(hp.host)
}

// originAllowed reports whether the request's Origin is acceptable: absent
// (CDP libraries send none), the proxy's own origin (a DevTools page served
// from this host:port), or listed in Config.AllowedOrigins. Browsers apply no
// CORS to WebSockets, so this is what stops a web page from driving CDP.
func (p *policy) originAllowed(r *http.Request) bool {
	values := r.Header.Values("Origin")
	if len(values) == 0 {
		return true
	}
	if len(values) > 1 {
		return false
	}
	origin, ok := normalizeOrigin(values[0])
	if !ok {
		return false
	}
	if p.allowedOrigins[origin] {
		return true
	}
	u, _ := url.Parse(origin)
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	hp, ok := parseAuthority(u.Host, defaultPortFor(u.Scheme))
	if !ok {
		return false
	}
	if hp == p.advertised {
		return true
	}
	return p.loopbackBind && hp.port == p.port && isLoopbackHost(hp.host)
}

// normalizeOrigin returns scheme://host[:port] in lowercase, without a
// default port, or false for anything that is not a serialized origin
// ("null" included).
func normalizeOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	hp, ok := parseAuthority(u.Host, defaultPortFor(scheme))
	if !ok {
		// Schemes without a default port (devtools://devtools) need no port.
		if hp, ok = parseAuthority(u.Host, -1); !ok {
			return "", false
		}
	}
	host := hp.host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if hp.port > 0 && hp.port != defaultPortFor(scheme) {
		host += ":" + strconv.Itoa(hp.port)
	}
	return scheme + "://" + host, true
}
