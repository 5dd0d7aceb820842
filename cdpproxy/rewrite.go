package cdpproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
)

// rewriter turns the browser's internal DevTools URLs into the public
// capability form. It is built per generation and never fails open: a URL it
// cannot map is dropped rather than passed through, so no internal endpoint
// reaches a CDP client.
type rewriter struct {
	// wsBase is "ws(s)://<advertised authority>/cdp/<cap>".
	wsBase string
	// paramBase is "<advertised authority>/cdp/<cap>", the form of a ws=/wss= value.
	paramBase string
	// paramKey is "ws" or "wss", after the advertised scheme.
	paramKey string
}

func newRewriter(scheme, authority, capability string) rewriter {
	wsScheme, key := "ws", "ws"
	if scheme == "https" {
		wsScheme, key = "wss", "wss"
	}
	return rewriter{
		wsBase:    wsScheme + "://" + authority + "/cdp/" + capability,
		paramBase: authority + "/cdp/" + capability,
		paramKey:  key,
	}
}

// devtoolsPath reports whether p is a WebSocket path the proxy forwards:
// /devtools/browser/<id> or /devtools/page/<id>.
func devtoolsPath(p string) bool {
	rest, ok := strings.CutPrefix(p, "/devtools/")
	if !ok {
		return false
	}
	kind, id, ok := strings.Cut(rest, "/")
	if !ok || (kind != "browser" && kind != "page") {
		return false
	}
	return validTargetID(id)
}

// pageTarget is the target id of a /devtools/page/<id> path, or "".
func pageTarget(p string) string {
	id, ok := strings.CutPrefix(p, "/devtools/page/")
	if !ok || !validTargetID(id) {
		return ""
	}
	return id
}

// validTargetID accepts Chromium's target and browser ids (hex, UUIDs).
func validTargetID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// webSocketURL maps a webSocketDebuggerUrl such as
// ws://127.0.0.1:9222/devtools/page/ABC to ws(s)://host:port/cdp/<cap>/devtools/page/ABC.
func (rw rewriter) webSocketURL(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || (!strings.EqualFold(u.Scheme, "ws") && !strings.EqualFold(u.Scheme, "wss")) {
		return "", false
	}
	if u.RawPath != "" || !devtoolsPath(u.Path) {
		return "", false
	}
	return rw.wsBase + u.Path, true
}

// paramValue maps a ws=/wss= value ("127.0.0.1:9222/devtools/page/ABC", no
// scheme) to "host:port/cdp/<cap>/devtools/page/ABC".
func (rw rewriter) paramValue(v string) (string, bool) {
	_, p, ok := strings.Cut(v, "/")
	if !ok || strings.ContainsAny(v, "?#") {
		return "", false
	}
	p = "/" + p
	if !devtoolsPath(p) {
		return "", false
	}
	return rw.paramBase + p, true
}

// frontendURL maps a devtoolsFrontendUrl. Its ws=/wss= parameters are
// rewritten (the key follows the advertised scheme) or dropped when they do
// not name a forwardable target; a loopback scheme://host is removed, leaving
// a relative URL; other parameters and hosts (the hosted frontend) are kept.
func (rw rewriter) frontendURL(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" {
		return "", false
	}
	if u.Host != "" || u.Scheme != "" || u.User != nil {
		if u.Scheme == "" || u.User != nil || !publicHost(hostOnly(u.Host)) {
			// A host that is or may be this machine points at an internal
			// endpoint: keep only the path, relative to the proxy.
			u.Scheme, u.Host, u.User = "", "", nil
		}
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		kept := parts[:0]
		for _, part := range parts {
			rawKey, rawVal, _ := strings.Cut(part, "=")
			key, kerr := url.QueryUnescape(rawKey)
			if kerr != nil {
				key = rawKey
			}
			if key != "ws" && key != "wss" {
				if kerr != nil {
					continue // cannot tell it is not a ws parameter: drop it
				}
				kept = append(kept, part)
				continue
			}
			val, verr := url.QueryUnescape(rawVal)
			if verr != nil {
				continue
			}
			nv, ok := rw.paramValue(val)
			if !ok {
				continue
			}
			kept = append(kept, rw.paramKey+"="+escapeParam(nv))
		}
		u.RawQuery = strings.Join(kept, "&")
		u.ForceQuery = false
	}
	out := u.String()
	if u.Scheme == "" && u.Host == "" && strings.HasPrefix(out, "//") {
		// A path starting with "//" would read as a network-path reference.
		return "", false
	}
	return out, true
}

// publicHost reports a DNS name that is not localhost and that a browser's
// URL parser does not read as an IP address (WHATWG: a last label that is a
// decimal or 0x number makes the host IPv4, e.g. "2130706433" is 127.0.0.1).
// Literal IPs are refused too: the hosted DevTools frontend has a name.
func publicHost(h string) bool {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || strings.ContainsAny(h, ":[]%") || h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return false
	}
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if hex, ok := strings.CutPrefix(last, "0x"); ok {
		last = hex
		if strings.Trim(last, "0123456789abcdef") == "" {
			return false
		}
	}
	return strings.Trim(last, "0123456789") != ""
}

// hostOnly strips a port and IPv6 brackets from an authority.
func hostOnly(authority string) string {
	if h, _, err := net.SplitHostPort(authority); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(authority, "["), "]")
}

// escapeParam escapes a query value, keeping the characters a host:port/path
// needs readable (Chromium writes ws= values unescaped).
func escapeParam(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '-', c == '_', c == '.', c == '~', c == '/', c == ':', c == '[', c == ']':
			b.WriteByte(c)
		default:
			const hex = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// errNotJSON is returned for an upstream body that is not one JSON value.
var errNotJSON = errors.New("upstream body is not a single JSON value")

// body rewrites every webSocketDebuggerUrl and devtoolsFrontendUrl in a
// discovery answer (/json/version, /json/list, /json/new), at any depth.
// Numbers keep their text; object keys come out sorted.
func (rw rewriter) body(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errNotJSON
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errNotJSON
	}
	v = rw.value(v)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

func (rw rewriter) value(v any) any {
	switch t := v.(type) {
	case []any:
		for i := range t {
			t[i] = rw.value(t[i])
		}
	case map[string]any:
		for k, item := range t {
			var mapped string
			ok := false
			switch k {
			case "webSocketDebuggerUrl":
				if s, isStr := item.(string); isStr {
					mapped, ok = rw.webSocketURL(s)
				}
			case "devtoolsFrontendUrl":
				if s, isStr := item.(string); isStr {
					mapped, ok = rw.frontendURL(s)
				}
			default:
				t[k] = rw.value(item)
				continue
			}
			if ok {
				t[k] = mapped
			} else {
				delete(t, k)
			}
		}
	}
	return v
}
