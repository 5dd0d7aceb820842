package cdpproxy

import (
	"fmt"
	"time"
)

// Default limits, per proxy (one proxy per MCP session). They match the
// TypeScript bridge's limits.ts.
const (
	DefaultMaxWebSockets    = 8
	DefaultMaxHTTPRequests  = 16
	DefaultMaxHeaderBytes   = 16 << 10
	DefaultMaxResponseBytes = 4 << 20
	DefaultMaxMessageBytes  = 16 << 20
	DefaultTimeout          = 10 * time.Second
	DefaultShutdownTimeout  = 5 * time.Second
)

// Limits bounds what CDP clients can make one [Proxy] hold. Every zero field
// means its default; negative values are invalid.
type Limits struct {
	// MaxWebSockets is the number of proxied WebSockets open at once,
	// handshakes included. The next one gets 503 before the upgrade.
	// If zero, DefaultMaxWebSockets (8).
	MaxWebSockets int

	// MaxHTTPRequests is the number of discovery/target HTTP requests being
	// proxied at once. The next one gets 503. If zero, DefaultMaxHTTPRequests (16).
	MaxHTTPRequests int

	// MaxHeaderBytes bounds request headers (http.Server.MaxHeaderBytes;
	// net/http answers 431 above it). If zero, DefaultMaxHeaderBytes (16 KiB).
	MaxHeaderBytes int

	// MaxResponseBytes bounds an upstream HTTP answer; a larger one becomes
	// 502. If zero, DefaultMaxResponseBytes (4 MiB).
	MaxResponseBytes int64

	// MaxMessageBytes bounds one WebSocket message in either direction; a
	// larger one closes the socket with 1009. If zero, DefaultMaxMessageBytes (16 MiB).
	MaxMessageBytes int64

	// Timeout bounds an upstream HTTP exchange, the upstream WebSocket
	// handshake and the reading of request headers. If zero, DefaultTimeout (10s).
	Timeout time.Duration

	// ShutdownTimeout is how long [Proxy.Close] lets WebSocket close
	// handshakes run before it drops the connections.
	// If zero, DefaultShutdownTimeout (5s).
	ShutdownTimeout time.Duration
}

// validate reports the first negative field.
func (l Limits) validate() error {
	checks := []struct {
		name string
		v    int64
	}{
		{"MaxWebSockets", int64(l.MaxWebSockets)},
		{"MaxHTTPRequests", int64(l.MaxHTTPRequests)},
		{"MaxHeaderBytes", int64(l.MaxHeaderBytes)},
		{"MaxResponseBytes", l.MaxResponseBytes},
		{"MaxMessageBytes", l.MaxMessageBytes},
		{"Timeout", int64(l.Timeout)},
		{"ShutdownTimeout", int64(l.ShutdownTimeout)},
	}
	for _, c := range checks {
		if c.v < 0 {
			return fmt.Errorf("cdpproxy: Limits.%s is %d: must not be negative", c.name, c.v)
		}
	}
	return nil
}

// withDefaults fills every zero field with its default.
func (l Limits) withDefaults() Limits {
	if l.MaxWebSockets == 0 {
		l.MaxWebSockets = DefaultMaxWebSockets
	}
	if l.MaxHTTPRequests == 0 {
		l.MaxHTTPRequests = DefaultMaxHTTPRequests
	}
	if l.MaxHeaderBytes == 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxResponseBytes == 0 {
		l.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if l.MaxMessageBytes == 0 {
		l.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if l.Timeout == 0 {
		l.Timeout = DefaultTimeout
	}
	if l.ShutdownTimeout == 0 {
		l.ShutdownTimeout = DefaultShutdownTimeout
	}
	return l
}

// Stats is a point-in-time view of a [Proxy]'s load.
type Stats struct {
	// ActiveConnections counts proxied WebSockets, handshakes in progress
	// included (the bridge's cdp.activeConnections).
	ActiveConnections int
	// ActiveRequests counts HTTP requests being proxied to the browser.
	ActiveRequests int
	// Rejections counts security rejections since the proxy started.
	Rejections Rejections
}

// Rejections counts requests refused for security reasons, by reason.
type Rejections struct {
	Capability uint64 // a /cdp/<capability> path with a wrong, unknown or revoked capability
	Host       uint64 // a Host header that is not the advertised (or, on loopback, a loopback) authority
	Origin     uint64 // an Origin header that is not allowed
}

// Total is the sum of all reasons.
func (r Rejections) Total() uint64 { return r.Capability + r.Host + r.Origin }
