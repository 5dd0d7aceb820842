package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/httpguard"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// JSON-RPC error codes of the HTTP transport beyond the standard ones
// (httpguard has -32002 and -32003, the policy's refusals).
const (
	codeServerBusy      = -32000 // no session slot free, or stopping
	codeSessionNotFound = -32001 // unknown, ended or foreign session
	codeStreamConflict  = -32004 // a second GET stream for one session
)

// rpcMessage is the part of a JSON-RPC message the middleware looks at.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// protocolVersion returns the version a message declares in its _meta
// (2026-07-28 style), or "".
func (m rpcMessage) protocolVersion() string {
	var params struct {
		Meta *mcp.Meta `json:"_meta"`
	}
	if len(m.Params) == 0 || json.Unmarshal(m.Params, &params) != nil {
		return ""
	}
	return params.Meta.ProtocolVersion()
}

// endpoint wraps the mcp-go handler with the MCP endpoint's policy: method,
// auth, content type, body size, well-formed JSON, the session cap on
// initialize, and that a session exists and belongs to the caller.
func (t *httpTransport) endpoint(next http.Handler) http.Handler {
	p := t.policy
	log := t.s.log
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reject := func(status, code int, id json.RawMessage, msg string) {
			log.Debug().Int("status", status).Str("method", r.Method).Str("remote", r.RemoteAddr).Str("reason", msg).Msg("MCP request refused")
			httpguard.WriteError(w, status, id, code, msg)
		}
		switch r.Method {
		case http.MethodPost, http.MethodGet, http.MethodDelete:
		case http.MethodOptions:
			if p.CORS() { // a CORS preflight carries no credentials
				next.ServeHTTP(w, r)
				return
			}
			fallthrough
		default:
			w.Header().Set("Allow", "GET, POST, DELETE")
			reject(http.StatusMethodNotAllowed, mcp.INVALID_REQUEST, nil, fmt.Sprintf("method %s not allowed on the MCP endpoint (GET, POST, DELETE)", r.Method))
			return
		}
		principal, ok := p.Principal(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cloakbrowser-mcp"`)
			reject(http.StatusUnauthorized, httpguard.CodeUnauthorized, nil, "Unauthorized: send Authorization: Bearer <token>")
			return
		}
		if t.refuseForgedForward(w, r) {
			return
		}

		var msg rpcMessage
		modern := mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
		if r.Method == http.MethodPost {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				reject(http.StatusUnsupportedMediaType, mcp.INVALID_REQUEST, nil, fmt.Sprintf("Content-Type %q not supported: POST a JSON-RPC message as application/json", r.Header.Get("Content-Type")))
				return
			}
			body, status, err := p.ReadBody(w, r)
			if err != nil {
				reject(status, mcp.INVALID_REQUEST, nil, err.Error())
				return
			}
			if !json.Valid(body) {
				reject(http.StatusBadRequest, mcp.PARSE_ERROR, nil, "Parse error: the body is not valid JSON")
				return
			}
			if err := json.Unmarshal(body, &msg); err != nil {
				what := "a JSON-RPC message is a JSON object with a string \"method\" (or a response with an \"id\")"
				if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
					what = "JSON-RPC batches are not supported: send one message per request"
				}
				reject(http.StatusBadRequest, mcp.INVALID_REQUEST, nil, "Invalid Request: "+what)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			modern = modern || mcp.IsModernProtocol(msg.protocolVersion())
		}
		if modern {
			// 2026-07-28 and later carry no session. mcp-go answers them
			// (POST: UnsupportedProtocolVersion listing HTTPProtocolVersions,
			// so clients fall back to initialize; GET/DELETE: 405); none
			// reaches a tool.
			next.ServeHTTP(w, r)
			return
		}
		sid := r.Header.Get(server.HeaderKeySessionID)
		if r.Method == http.MethodPost && msg.Method == string(mcp.MethodInitialize) {
			t.initialize(w, r, next, principal, msg)
			return
		}
		if sid == "" {
			reject(http.StatusBadRequest, mcp.INVALID_REQUEST, msg.ID, "Bad Request: Mcp-Session-Id header is required (send initialize first)")
			return
		}
		if _, err := t.reg.Lookup(sid, principal); err != nil {
			// Not here: another instance of the fleet may own it.
			if errors.Is(err, session.ErrNotFound) && t.forwardOrRefuse(w, r, sid, principal, msg.ID) {
				return
			}
			if errors.Is(err, session.ErrPrincipal) {
				log.Warn().Str("principal", principal).Str("method", r.Method).Str("remote", r.RemoteAddr).Msg("MCP request refused: session belongs to another principal")
			}
			reject(http.StatusNotFound, codeSessionNotFound, msg.ID, msgSessionNotFound)
			return
		}
		if r.Method == http.MethodGet {
			// One GET stream per session (as the TypeScript SDK): a second
			// one gets 409 and the first keeps receiving.
			release, ok := t.streams.acquire(sid)
			if !ok {
				reject(http.StatusConflict, codeStreamConflict, nil, "Conflict: this session already has an open GET stream; keep using it, or close it before opening another")
				return
			}
			defer release()
		}
		next.ServeHTTP(w, r)
		if r.Method == http.MethodDelete {
			// mcp-go terminated it through idManager; make sure the browser
			// is gone before the client hears back (Close waits).
			_ = t.reg.Close(sid)
		}
	})
}

// msgSessionNotFound answers a request for a session this server (or, in a
// fleet, any instance) does not have.
const msgSessionNotFound = "Session not found: it was closed, expired or never existed; send initialize to start a new one"
