package server

import (
	"context"
	"log"
	"log/slog"
	"strings"

	"github.com/rs/zerolog"
)

// The adapters that route the libraries' logs into the server's zerolog
// logger: mcp-go's stdio server and net/http want a *log.Logger, mcp-go's
// Streamable HTTP server a *slog.Logger.

// stdLogger adapts zerolog to a *log.Logger: every line is a warning
// tagged with component ("mcp": mcp-go's stdio errors; "http": net/http's
// own, such as TLS handshake failures and bad requests it answers itself).
func stdLogger(l zerolog.Logger, component string) *log.Logger {
	return log.New(zwriter{l: l, component: component}, "", 0)
}

type zwriter struct {
	l         zerolog.Logger
	component string
}

func (w zwriter) Write(p []byte) (int, error) {
	w.l.Warn().Str("component", w.component).Msg(strings.TrimSpace(string(p)))
	return len(p), nil
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
