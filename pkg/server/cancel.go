package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"
)

// cancels keeps the responses of cancelled tool calls from reaching the
// client. mcp-go cancels a call's context on notifications/cancelled (the
// session's door then ends its browser work at once), but it still writes
// the tool's answer; the spec says a cancelled request gets no response.
// A call whose context ended before it answered is marked in the
// AfterCallTool hook, which runs before mcp-go writes the response; each
// transport then drops that one response: stdio by its id (stdioWriter),
// Streamable HTTP per POST (httpHandler).
type cancels struct {
	log zerolog.Logger

	mu    sync.Mutex
	stdio map[string]bool // JSON ids of stdio responses to drop
}

func newCancels(log zerolog.Logger) *cancels {
	return &cancels{log: log, stdio: map[string]bool{}}
}

// dropFlag marks one HTTP POST whose response is dropped.
type dropFlag struct{ set atomic.Bool }

type dropFlagKey struct{}

// hooks registers the marking hook.
func (c *cancels) hooks(h *server.Hooks) {
	h.AddAfterCallTool(func(ctx context.Context, id any, req *mcp.CallToolRequest, _ any) {
		if ctx.Err() == nil {
			return // answered before any cancellation
		}
		c.log.Debug().Str("tool", req.Params.Name).Msg("tool call cancelled: its response is not sent")
		if f, ok := ctx.Value(dropFlagKey{}).(*dropFlag); ok {
			f.set.Store(true)
			return
		}
		if key, ok := idKey(id); ok {
			c.mu.Lock()
			c.stdio[key] = true
			c.mu.Unlock()
		}
	})
}

// idKey is the canonical JSON of a request id (1 and 1.0 are one id).
func idKey(id any) (string, bool) {
	if raw, ok := id.(json.RawMessage); ok {
		if err := json.Unmarshal(raw, &id); err != nil {
			return "", false
		}
	}
	if id == nil {
		return "", false
	}
	b, err := json.Marshal(id)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// stdioWriter wraps the stdio transport's output: a response whose id was
// marked is dropped. mcp-go writes one message per Write, under a lock.
func (c *cancels) stdioWriter(w io.Writer) io.Writer { return &cancelWriter{c: c, w: w} }

type cancelWriter struct {
	c *cancels
	w io.Writer
}

func (cw *cancelWriter) Write(p []byte) (int, error) {
	c := cw.c
	c.mu.Lock()
	pending := len(c.stdio) > 0
	c.mu.Unlock()
	if pending && c.drop(p) {
		return len(p), nil
	}
	return cw.w.Write(p)
}

// drop reports whether p is a response to a marked request, unmarking it.
func (c *cancels) drop(p []byte) bool {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(p), &msg); err != nil || msg.Method != "" || len(msg.ID) == 0 {
		return false
	}
	key, ok := idKey(msg.ID)
	if !ok {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stdio[key] {
		return false
	}
	delete(c.stdio, key)
	c.log.Debug().Str("id", key).Msg("dropped the response of a cancelled request")
	return true
}

// httpHandler wraps the Streamable HTTP handler: each POST carries a flag
// the hook sets when its call was cancelled; from then on what the handler
// writes is dropped (the response, and notifications still queued for it),
// and a response not yet started becomes 202 Accepted with no body.
func (c *cancels) httpHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		f := &dropFlag{}
		r = r.WithContext(context.WithValue(r.Context(), dropFlagKey{}, f))
		next.ServeHTTP(&dropWriter{ResponseWriter: w, f: f}, r)
	})
}

type dropWriter struct {
	http.ResponseWriter
	f       *dropFlag
	started bool
}

func (d *dropWriter) WriteHeader(code int) {
	if d.started {
		return
	}
	d.started = true
	if d.f.set.Load() {
		d.ResponseWriter.Header().Del("Content-Type")
		code = http.StatusAccepted
	}
	d.ResponseWriter.WriteHeader(code)
}

func (d *dropWriter) Write(p []byte) (int, error) {
	if !d.started {
		d.WriteHeader(http.StatusOK)
	}
	if d.f.set.Load() {
		return len(p), nil
	}
	return d.ResponseWriter.Write(p)
}

// Flush keeps streaming (mcp-go needs an http.Flusher for SSE).
func (d *dropWriter) Flush() {
	if f, ok := d.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (d *dropWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }
