package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cloakmcp/cloakbrowser-mcp/cdpproxy"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/httpguard"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// initialize admits a new session if a slot is free and principal is under
// its quota (503 at once if not: no queue), and binds the session mcp-go
// creates to principal. A session that asks for CDP (initialize _meta, or
// --cdp-enabled) gets its port leased here, before it exists, so a lease
// failure refuses the initialize.
func (t *httpTransport) initialize(w http.ResponseWriter, r *http.Request, next http.Handler, principal string, msg rpcMessage) {
	id := msg.ID
	meta, err := parseBridgeMeta(msg.Params)
	if len(meta.others) > 0 {
		t.s.log.Debug().Strs("keys", meta.others).Msg("initialize _meta: keys that are not this server's, ignored")
	}
	wantCDP := meta.cdpRequested(t.s.cfg.CDP.Enabled)
	switch {
	case err != nil:
		httpguard.WriteError(w, http.StatusBadRequest, id, mcp.INVALID_PARAMS, err.Error())
		return
	case wantCDP && t.shared != nil && t.cfg.Isolation == "context":
		httpguard.WriteError(w, http.StatusBadRequest, id, mcp.INVALID_PARAMS,
			"CDP is not available with --http-isolation=context: a CDP endpoint on the shared browser would reach every session's pages")
		return
	case wantCDP && t.s.cfg.CDP.PortRange == "":
		httpguard.WriteError(w, http.StatusBadRequest, id, mcp.INVALID_PARAMS,
			"CDP is not available on this server: it was started without --cdp-port-range")
		return
	}
	// A session with settings of its own: checked (and its profile
	// claimed) before a slot is taken, so a refusal costs nothing.
	var setup *sessionSetup
	if len(meta.settings()) > 0 {
		if setup, err = t.sessionSetupFor(r.Context(), principal, meta); err != nil {
			t.s.log.Info().Err(err).Str("principal", principal).Msg("new session refused: its initialize settings")
			httpguard.WriteError(w, http.StatusBadRequest, id, mcp.INVALID_PARAMS, err.Error())
			return
		}
		t.s.log.Debug().Strs("settings", meta.settings()).Str("principal", principal).Bool("sharedBrowser", setup.cfg.Shared != nil).
			Msg("new session with settings of its own")
		defer func() {
			if setup != nil { // the session was not created
				setup.release()
			}
		}()
	}
	res, err := t.reg.ReserveFor(principal)
	if err != nil {
		st := t.reg.Stats()
		msg := fmt.Sprintf("Server busy: all %d sessions are in use; retry later or end an idle session", st.Max)
		switch {
		case errors.Is(err, session.ErrClosed):
			msg = "Server is shutting down"
		case errors.Is(err, session.ErrPrincipalFull):
			who := "this token already has"
			if principal == httpguard.Anonymous {
				who = "clients without a token (one principal) already have"
			}
			msg = fmt.Sprintf("Server busy: %s %d sessions (--http-session-max-per-principal); close one (DELETE) or wait for idle expiry",
				who, t.cfg.SessionMaxPerPrincipal)
		}
		w.Header().Set("Retry-After", "5")
		t.s.log.Warn().Str("principal", principal).Int("active", st.Active).Int("pending", st.Pending).Int("max", st.Max).
			Str("remote", r.RemoteAddr).Msg("new session refused: " + msg)
		httpguard.WriteError(w, http.StatusServiceUnavailable, id, codeServerBusy, msg)
		return
	}
	defer res.Release()
	fres, ok := t.fleetReserve(w, r, principal, id)
	if !ok {
		return
	}
	defer func() {
		if fres != nil { // no session was created
			fres.Cancel(context.Background())
		}
	}()
	var lease *cdpproxy.Lease
	if wantCDP {
		if lease, err = t.s.leaseCDP(r.Context()); err != nil {
			t.s.log.Warn().Err(err).Str("remote", r.RemoteAddr).Msg("new session refused: no CDP port")
			w.Header().Set("Retry-After", "5")
			httpguard.WriteError(w, http.StatusServiceUnavailable, id, codeServerBusy, "CDP endpoint unavailable: "+err.Error())
			return
		}
		defer func() {
			if lease != nil { // the session was not created
				lease.Release()
			}
		}()
	}
	cw := &sessionCapture{ResponseWriter: w, onHeader: func(h http.Header) {
		// Runs before the response (and so the session ID) reaches the
		// client, so its next request finds the session.
		sid := h.Get(server.HeaderKeySessionID)
		if sid == "" {
			return
		}
		var newSession func(handle string) *session.Session
		if setup != nil {
			cfg := setup.cfg
			newSession = func(handle string) *session.Session { return t.newSession(handle, cfg) }
		}
		sess, err := res.ActivateWith(sid, principal, newSession)
		if err != nil {
			t.s.log.Warn().Err(err).Msg("session not registered")
			return
		}
		if setup != nil {
			t.holdProfile(sess.ID(), setup.release)
			setup = nil // the session owns its profile claim now
		}
		if fres != nil {
			if err := fres.Commit(r.Context(), sid); err != nil {
				t.s.log.Warn().Err(err).Msg("fleet: session not published yet (Redis unavailable); published when it returns")
			}
			fres = nil
		}
		if lease != nil {
			l := lease
			lease = nil // the session owns it now
			if err := sess.EnableCDP(l, t.s.cdpProxyConfig()); err != nil {
				t.s.log.Error().Err(err).Str("session", sess.ID()).Msg("CDP endpoint not enabled")
			}
		}
	}}
	next.ServeHTTP(cw, r)
}

// sessionCapture calls onHeader once, just before the response header is
// written.
type sessionCapture struct {
	http.ResponseWriter
	once     sync.Once
	onHeader func(http.Header)
}

func (c *sessionCapture) before() { c.once.Do(func() { c.onHeader(c.Header()) }) }

func (c *sessionCapture) WriteHeader(code int) {
	c.before()
	c.ResponseWriter.WriteHeader(code)
}

func (c *sessionCapture) Write(b []byte) (int, error) {
	c.before()
	return c.ResponseWriter.Write(b)
}

// Flush keeps SSE streaming working through the wrapper.
func (c *sessionCapture) Flush() {
	c.before()
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (c *sessionCapture) Unwrap() http.ResponseWriter { return c.ResponseWriter }
