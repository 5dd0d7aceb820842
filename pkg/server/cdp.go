package server

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/mark3labs/mcp-go/server"

	"github.com/cloakmcp/cloakbrowser-mcp/cdpproxy"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// MetaKeys are the initialize _meta keys whose object holds per-session
// settings ({"cdpEnabled": true}): the TypeScript bridge's key, so its
// clients work unchanged, and this server's own name.
var MetaKeys = []string{"io.github.swimmwatch/cloakbrowser-mcp", "io.github.cloakmcp/cloakbrowser-mcp"}

// cdpLeaser returns the process's port leaser for --cdp-port-range, made on
// first use: ports are leased process-wide, one per session.
func (s *Server) cdpLeaser() (*cdpproxy.Leaser, error) {
	s.cdpOnce.Do(func() {
		if s.cfg.CDP.PortRange == "" {
			s.cdpErr = errors.New("CDP is not available on this server: start it with --cdp-port-range (and --cdp-enabled to turn it on for every session)")
			return
		}
		s.leaser, s.cdpErr = cdpproxy.NewLeaser(s.cfg.CDP.Host, s.cfg.CDP.PortRange)
	})
	return s.leaser, s.cdpErr
}

// cdpProxyConfig is the proxy configuration every session's endpoint uses.
func (s *Server) cdpProxyConfig() cdpproxy.Config {
	return cdpproxy.Config{
		BindHost:         s.cfg.CDP.Host,
		AdvertisedHost:   s.cfg.CDP.AdvertisedHost,
		AdvertisedScheme: s.cfg.CDP.AdvertisedScheme,
		AllowRemote:      s.cfg.CDP.AllowRemote,
		// The agents' file rules. The session adds its own directory as the
		// only root: not the working directory (the --secrets file lives
		// there), not another principal's directory.
		Files: cdpproxy.FilePolicy{Unrestricted: s.cfg.AllowUnrestrictedFileAccess},
	}
}

// leaseCDP leases the lowest free port of --cdp-port-range for a session.
func (s *Server) leaseCDP(ctx context.Context) (*cdpproxy.Lease, error) {
	l, err := s.cdpLeaser()
	if err != nil {
		return nil, err
	}
	lease, err := l.Lease(ctx)
	if err != nil {
		return nil, fmt.Errorf("--cdp-port-range=%s: %w", s.cfg.CDP.PortRange, err)
	}
	return lease, nil
}

// enableCDP gives sess a CDP endpoint on a newly leased port.
func (s *Server) enableCDP(ctx context.Context, sess *session.Session) error {
	lease, err := s.leaseCDP(ctx)
	if err != nil {
		return err
	}
	return sess.EnableCDP(lease, s.cdpProxyConfig())
}

// existingSession is the caller's session if it exists; it never creates
// one (local tools must not start anything).
func (s *Server) existingSession(ctx context.Context) *session.Session {
	s.mu.Lock()
	ht, stdio := s.httpT, s.stdio
	s.mu.Unlock()
	if ht == nil {
		return stdio
	}
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil || cs.SessionID() == "" {
		return nil
	}
	sess, err := ht.reg.Get(cs.SessionID())
	if err != nil {
		return nil
	}
	return sess
}

// bridgeInfo adds the caller's CDP block to cloakbrowser_bridge_info.
func (s *Server) bridgeInfo(ctx context.Context) map[string]any {
	sess := s.existingSession(ctx)
	return map[string]any{"cdp": cdpBlock(sess), "browser": browserBlock(sess)}
}

// cdpBlock is the bridge's cdp object: {"enabled":false}, or the endpoint's
// state. The discovery URL is the capability: it goes to the session's own
// client only, never to a log.
func cdpBlock(sess *session.Session) map[string]any {
	var c *session.CDP
	if sess != nil {
		c = sess.CDP()
	}
	if c == nil {
		return map[string]any{"enabled": false}
	}
	info := c.Info()
	orNull := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	return map[string]any{
		"enabled":           true,
		"state":             info.State,
		"generation":        info.Generation,
		"bindHost":          info.BindHost,
		"port":              info.Port,
		"advertisedHost":    orNull(info.AdvertisedHost),
		"discoveryUrl":      orNull(info.DiscoveryURL),
		"activeConnections": info.ActiveConnections,
	}
}

// redactEndpoint drops credentials from an endpoint URL (user info, query
// tokens as Browserless uses) before it is shown.
func redactEndpoint(e string) string {
	u, err := url.Parse(e)
	if err != nil {
		return "<unparseable endpoint>"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "<redacted>"
	}
	return u.String() // RawQuery is written as is
}

// browserBlock is the bridge's browser object: where the session's browser
// lives ("local": launched by this server; "remote": a Playwright server or
// CDP endpoint, credentials removed; endpoint null until the session's
// first browser call attaches it).
func browserBlock(sess *session.Session) map[string]any {
	if sess == nil {
		return map[string]any{"location": nil}
	}
	if e := sess.RemoteEndpoint(); e != "" {
		return map[string]any{"location": "remote", "endpoint": redactEndpoint(e)}
	}
	if c := sess.Config(); c.PickEndpoint != nil || c.CDPEndpoint != "" || c.Endpoint != "" {
		return map[string]any{"location": "remote", "endpoint": nil}
	}
	return map[string]any{"location": "local"}
}
