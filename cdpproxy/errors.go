package cdpproxy

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
)

// Sentinel errors callers branch on with [errors.Is].
var (
	// ErrRevoked means the capability a request or socket used was revoked
	// (browser lost or replaced). It is the cause of the cancellation seen by
	// in-flight upstream calls of a revoked generation.
	ErrRevoked = errors.New("cdpproxy: capability revoked")

	// ErrPortInUse means the lowest port of the range that this process has not
	// leased is held by another process. [Leaser.Lease] never skips past it.
	ErrPortInUse = errors.New("cdpproxy: port in use by another process")

	// ErrLimit means a configured limit was reached: every port of the range is
	// leased, too many connections, or an upstream answer is too large.
	ErrLimit = errors.New("cdpproxy: limit reached")

	// ErrClosed means the [Proxy] was closed; it cannot publish again.
	ErrClosed = errors.New("cdpproxy: proxy closed")
)

// Error codes of the JSON error body {"error":{"code":...,"message":...}}.
const (
	codeNotFound         = "not_found"
	codeForbidden        = "forbidden"
	codeFilePolicy       = "file_policy"
	codeBadRequest       = "bad_request"
	codeMethodNotAllowed = "method_not_allowed"
	codePayloadTooLarge  = "payload_too_large"
	codeLimit            = "limit"
	codeUnavailable      = "unavailable"
	codeUpstreamError    = "upstream_error"
	codeBadGateway       = "bad_gateway"
	codeGatewayTimeout   = "gateway_timeout"
)

// Fixed client-facing messages. They never carry a capability, an upstream
// address or an upstream error text.
const (
	msgNotFound = "CDP endpoint not found"
)

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeError answers with the package's JSON error shape.
func writeError(w http.ResponseWriter, status int, code, message string) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	switch status {
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		h.Set("Retry-After", "1")
	}
	b, _ := json.Marshal(errorBody{Error: errorDetail{Code: code, Message: message}})
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeNotFound(w http.ResponseWriter) {
	writeError(w, http.StatusNotFound, codeNotFound, msgNotFound)
}
