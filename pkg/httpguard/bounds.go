package httpguard

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// ReadBody reads at most the policy's body cap (--http-max-body-bytes) of
// r's body; a larger one is refused (413), one cut by BoundBody is 408, and
// any other read failure 400. The status is 0 on success.
func (p *Policy) ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, int, error) {
	max := p.maxBody
	tooLarge := fmt.Errorf("Request body too large: the limit is %d bytes (--http-max-body-bytes)", max)
	if r.ContentLength > max {
		return nil, http.StatusRequestEntityTooLarge, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, http.StatusRequestEntityTooLarge, tooLarge
		}
		var slow *slowBodyError
		if errors.As(err, &slow) {
			return nil, http.StatusRequestTimeout, slow
		}
		return nil, http.StatusBadRequest, fmt.Errorf("read request body: %w", err)
	}
	return body, 0, nil
}

// Request body bounds. A body must arrive within bodyReadTimeout and never
// pause longer than bodyIdleTimeout; past either it is cut and the
// connection closed. These are per request, not http.Server's ReadTimeout
// or WriteTimeout: the server-wide ones would also end SSE streams and
// long tool calls, whose bodies were read long before.
const (
	bodyReadTimeout = 60 * time.Second // 4 MiB at ~70 KB/s
	bodyIdleTimeout = 15 * time.Second
)

// BoundBody bounds reading each request's body with read deadlines on its
// connection (http.ResponseController), extended while bytes arrive and
// cleared once the body has been read, so what follows (an SSE response)
// is not bounded. A body nobody reads (a refused request, which net/http
// then discards) stays bounded too. Zero total or idle means the default.
func BoundBody(next http.Handler, total, idle time.Duration) http.Handler {
	if total <= 0 {
		total = bodyReadTimeout
	}
	if idle <= 0 {
		idle = bodyIdleTimeout
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		b := &boundedBody{ReadCloser: r.Body, rc: http.NewResponseController(w), total: total, idle: idle, end: time.Now().Add(total)}
		if b.extend() != nil {
			// Not supported by this connection (nothing of ours): serve
			// unbounded rather than not at all.
			next.ServeHTTP(w, r)
			return
		}
		r.Body = b
		next.ServeHTTP(w, r)
	})
}

// boundedBody is a request body whose connection read deadline moves on
// with every read that brings bytes, up to a fixed end.
type boundedBody struct {
	io.ReadCloser
	rc          *http.ResponseController
	total, idle time.Duration
	end         time.Time
	done        bool
}

func (b *boundedBody) extend() error {
	d := time.Now().Add(b.idle)
	if d.After(b.end) {
		d = b.end
	}
	return b.rc.SetReadDeadline(d)
}

func (b *boundedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case b.done:
	case err == io.EOF:
		// Whole body read: nothing more to bound (net/http's own
		// background read now watches for the client going away).
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case err != nil:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return n, &slowBodyError{total: b.total, idle: b.idle, cause: err}
		}
	case n > 0:
		_ = b.extend()
	}
	return n, err
}

// slowBodyError is a body cut by boundBody's deadlines.
type slowBodyError struct {
	total, idle time.Duration
	cause       error
}

func (e *slowBodyError) Error() string {
	return fmt.Sprintf("Request body too slow: it must arrive within %s, with no pause over %s; send the whole body at once", e.total, e.idle)
}

func (e *slowBodyError) Unwrap() error { return e.cause }
