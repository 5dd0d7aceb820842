package cdpproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/portrange"
)

// PortRange is an inclusive range of TCP ports, First <= Last, both in
// 1–65535. Its String formats it as ParsePortRange accepts it ("9222" or
// "9222-9230") and Len counts its ports.
type PortRange = portrange.Range

// ParsePortRange parses "9222" or "9222-9230" (the --cdp-port-range flag).
// Ports are decimal, 1–65535, and the first may not exceed the last.
func ParsePortRange(s string) (PortRange, error) {
	r, err := portrange.Parse(s)
	if err != nil {
		return PortRange{}, fmt.Errorf("cdpproxy: %w", err)
	}
	return r, nil
}

// Leaser hands out ports of one range on one host, one [Lease] per caller
// (an MCP session), lowest port first. Leases are process-local: the Leaser
// remembers which ports this process holds; another process holding a port
// is found out by binding it. A Leaser is safe for concurrent use.
type Leaser struct {
	host  string
	ports PortRange

	mu     sync.Mutex
	leased map[int]bool // ports held (or being bound) by this process
}

// NewLeaser returns a Leaser for portRange (see [ParsePortRange]) on host, the
// address the listeners bind (the --cdp-host flag, e.g. "127.0.0.1").
func NewLeaser(host, portRange string) (*Leaser, error) {
	if strings.TrimSpace(host) == "" {
		return nil, errors.New("cdpproxy: bind host is empty; want an address such as 127.0.0.1")
	}
	r, err := ParsePortRange(portRange)
	if err != nil {
		return nil, err
	}
	return &Leaser{host: host, ports: r, leased: make(map[int]bool)}, nil
}

// Host is the address the leased listeners bind.
func (l *Leaser) Host() string { return l.host }

// Range is the leaser's port range.
func (l *Leaser) Range() PortRange { return l.ports }

// Lease binds the lowest port of the range that this process has not leased.
// If another process holds that port, Lease fails with [ErrPortInUse] and does
// not try the next one, so a session's port is predictable. If every port is
// leased by this process it fails with [ErrLimit].
func (l *Leaser) Lease(ctx context.Context) (*Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("cdpproxy: lease a port of %s on %s: %w", l.ports, l.host, err)
	}
	port, ok := l.reserve()
	if !ok {
		return nil, fmt.Errorf("cdpproxy: lease a port of %s on %s: all %d ports are leased by this process: %w",
			l.ports, l.host, l.ports.Len(), ErrLimit)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(l.host, strconv.Itoa(port)))
	if err != nil {
		l.unreserve(port)
		if isAddrInUse(err) {
			return nil, fmt.Errorf("cdpproxy: lease port %d on %s: port %d is in use by another process "+
				"(it is the lowest port of %s this process has not leased; free it or change the port range): %w",
				port, l.host, port, l.ports, ErrPortInUse)
		}
		return nil, fmt.Errorf("cdpproxy: lease port %d on %s: %w", port, l.host, err)
	}
	return &Lease{leaser: l, port: port, ln: ln}, nil
}

func (l *Leaser) reserve() (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p := l.ports.First; p <= l.ports.Last; p++ {
		if !l.leased[p] {
			l.leased[p] = true
			return p, true
		}
	}
	return 0, false
}

func (l *Leaser) unreserve(port int) {
	l.mu.Lock()
	delete(l.leased, port)
	l.mu.Unlock()
}

// isAddrInUse reports a bind refused because the address is taken.
func isAddrInUse(err error) bool {
	if errors.Is(err, syscall.EADDRINUSE) {
		return true
	}
	// Windows reports WSAEADDRINUSE (10048), which syscall does not map to EADDRINUSE.
	var errno syscall.Errno
	return errors.As(err, &errno) && errno == 10048
}

// Lease is one bound port, stable for the owner's life. It owns the listener;
// a [Proxy] serves on it. Release closes the listener and returns the port.
type Lease struct {
	leaser *Leaser
	port   int
	ln     net.Listener
	once   sync.Once
}

// Port is the leased TCP port.
func (l *Lease) Port() int { return l.port }

// Host is the address the listener is bound to.
func (l *Lease) Host() string { return l.leaser.host }

// Listener is the bound listener. Serving on it and closing it are the
// caller's; Release closes it too.
func (l *Lease) Listener() net.Listener { return l.ln }

// Release closes the listener (if it is still open) and returns the port to
// the Leaser. It is idempotent and safe for concurrent use.
func (l *Lease) Release() {
	l.once.Do(func() {
		_ = l.ln.Close() // may already be closed by the proxy's server
		l.leaser.unreserve(l.port)
	})
}
