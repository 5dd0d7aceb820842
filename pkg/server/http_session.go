package server

import (
	"context"
	"crypto/rand"
	"log/slog"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// idManager is mcp-go's SessionIdManager backed by the session registry: an
// ID is valid exactly while its session is registered, and terminating one
// (DELETE, the idle sweeper, CloseSessions) closes its browser.
type idManager struct{ reg *session.Registry }

// Generate mints an ID with 130 random bits (visible ASCII, as the spec
// requires).
func (m *idManager) Generate() string { return "mcp-session-" + rand.Text() }

// Validate fails for an unknown or ended session, which mcp-go answers 404.
func (m *idManager) Validate(id string) (bool, error) {
	if !m.reg.Has(id) {
		return false, session.ErrNotFound
	}
	return false, nil
}

// Terminate closes the session and waits for its browser to be gone.
func (m *idManager) Terminate(id string) (bool, error) {
	_ = m.reg.Close(id)
	return false, nil
}

// redactSessionID keeps enough of an MCP session ID to tell sessions apart
// in logs, not enough to use it.
func redactSessionID(id string) string {
	const keep = len("mcp-session-") + 4
	if len(id) <= keep {
		return id
	}
	return id[:keep] + "…"
}

// httpErrorLog takes net/http's own error lines (TLS handshake failures,
// bad requests it answers itself).
type httpErrorLog struct{ l zerolog.Logger }

func (w httpErrorLog) Write(p []byte) (int, error) {
	w.l.Warn().Str("component", "http").Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}

// slogToZerolog routes mcp-go's transport logs to zerolog, redacting
// session IDs.
func slogToZerolog(l zerolog.Logger) *slog.Logger { return slog.New(zlogHandler{l: l}) }

type zlogHandler struct {
	l     zerolog.Logger
	attrs []slog.Attr
}

func zlevel(l slog.Level) zerolog.Level {
	switch {
	case l >= slog.LevelError:
		return zerolog.ErrorLevel
	case l >= slog.LevelWarn:
		return zerolog.WarnLevel
	case l >= slog.LevelInfo:
		// mcp-go's info logs are per-session chatter; an operator gets ours.
		return zerolog.DebugLevel
	default:
		return zerolog.TraceLevel
	}
}

func (h zlogHandler) Enabled(_ context.Context, l slog.Level) bool {
	return zlevel(l) >= h.l.GetLevel()
}

func (h zlogHandler) Handle(_ context.Context, r slog.Record) error {
	e := h.l.WithLevel(zlevel(r.Level))
	add := func(a slog.Attr) bool {
		v := a.Value.Resolve()
		switch a.Key {
		case "session", "sessionID", "sessionId", "session_id":
			e = e.Str(a.Key, redactSessionID(v.String()))
		default:
			e = e.Interface(a.Key, v.Any())
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	e.Msg(r.Message)
	return nil
}

func (h zlogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return zlogHandler{l: h.l, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h zlogHandler) WithGroup(string) slog.Handler { return h }

// streams tracks the open GET (SSE) streams: at most one per session. The
// spec lets a server decline more; a client needs one to hear the server,
// and every extra one would hold a connection and a goroutine.
type streams struct {
	mu   sync.Mutex
	open map[string]bool // session key → a GET stream is open
}

// acquire marks key as streaming, or reports false if it already is. The
// caller calls release when its stream ends.
func (s *streams) acquire(key string) (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[key] {
		return nil, false
	}
	if s.open == nil {
		s.open = map[string]bool{}
	}
	s.open[key] = true
	return func() {
		s.mu.Lock()
		delete(s.open, key)
		s.mu.Unlock()
	}, true
}
