package httpguard

import (
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// DefaultRetryAfter is the Retry-After, in seconds, of a 503 whose writer
// set none: every 503 says when to try again.
const DefaultRetryAfter = "5"

// WriteJSON answers v as JSON with status code, never cached. A 503 without
// a Retry-After header gets DefaultRetryAfter.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if code == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", DefaultRetryAfter)
	}
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// WriteError answers with a JSON-RPC error object (id null unless the
// request's id is known), as the MCP transport allows for HTTP errors: the
// policy's refusals and the transport's own.
func WriteError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	WriteJSON(w, status, map[string]any{
		"jsonrpc": mcp.JSONRPC_VERSION,
		"id":      id,
		"error":   map[string]any{"code": code, "message": msg},
	})
}
